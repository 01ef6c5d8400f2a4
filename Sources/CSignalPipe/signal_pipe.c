// See include/CSignalPipe.h. The handler does nothing but write one byte: no allocation, no locks, errno kept.
#define _GNU_SOURCE
#include "CSignalPipe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int pipe_fds[2] = {-1, -1};
static int open_errno = 0;
static pthread_once_t pipe_once = PTHREAD_ONCE_INIT;

static void make_pipe(void) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        open_errno = errno;
        pipe_fds[0] = pipe_fds[1] = -1;
        return;
    }
    // A full pipe must never block a handler: a signal that finds it full is one of many already waiting.
    int flags = fcntl(pipe_fds[1], F_GETFL);
    if (flags != -1) (void)fcntl(pipe_fds[1], F_SETFL, flags | O_NONBLOCK);
}

int glasses_signal_pipe_open(void) {
    pthread_once(&pipe_once, make_pipe);
    if (pipe_fds[0] < 0) {
        errno = open_errno;
        return -1;
    }
    return pipe_fds[0];
}

static void on_signal(int signo) {
    int saved = errno;
    unsigned char byte = (unsigned char)signo;
    if (pipe_fds[1] >= 0) (void)write(pipe_fds[1], &byte, 1);
    errno = saved;
}

int glasses_signal_pipe_catch(int signo) {
    if (glasses_signal_pipe_open() < 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(signo, &action, NULL) != 0) return -1;
    // A process may start with the signal blocked (a parent that spawned it from a thread that blocks signals,
    // as dispatch's worker threads do, hands that mask down), and a blocked signal never reaches a handler.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    errno = pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    return errno == 0 ? 0 : -1;
}

int glasses_signal_pipe_release(int signo) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    return sigaction(signo, &action, NULL);
}
