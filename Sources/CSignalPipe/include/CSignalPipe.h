// The C half of CommandSupport's SignalTrap: a signal handler that only writes the signal's number to a pipe
// (write(2) is async-signal-safe), so Swift never runs inside a handler. One pipe per process.
#ifndef C_SIGNAL_PIPE_H
#define C_SIGNAL_PIPE_H

/// Creates the process's signal pipe once (both ends close-on-exec, the write end non-blocking) and returns its
/// read end; -1 with errno set when the pipe cannot be made.
int glasses_signal_pipe_open(void);

/// Sends `signo` into the pipe from now on (sigaction with SA_RESTART) and unblocks it in the calling thread;
/// 0, or -1 with errno set.
int glasses_signal_pipe_catch(int signo);

/// Gives `signo` back its default action; 0, or -1 with errno set.
int glasses_signal_pipe_release(int signo);

#endif
