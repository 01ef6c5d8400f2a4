// Shims for FFmpeg macros and variadics that Swift cannot call directly.
#ifndef GLASSES_CFFMPEG_SHIM_H
#define GLASSES_CFFMPEG_SHIM_H

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/time.h>
#include <libswscale/swscale.h>

/// AVERROR(EAGAIN): the codec wants more input or has output to drain first.
static inline int cffmpeg_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the codec or demuxer is fully drained.
static inline int cffmpeg_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(errno) for any errno value.
static inline int cffmpeg_averror(int e) { return AVERROR(e); }
/// AV_NOPTS_VALUE: no timestamp.
static inline int64_t cffmpeg_nopts_value(void) { return AV_NOPTS_VALUE; }
/// Writes the text of an FFmpeg error code into `buf` (av_err2str uses a compound literal).
static inline void cffmpeg_strerror(int code, char *buf, size_t size) { av_strerror(code, buf, size); }

#include <string.h>
#include <stdarg.h>

/// A counter of error-level log lines, hung on `AVCodecContext.opaque` by GlassesVideo's decoder so that it learns
/// about damage libavcodec only logs (for example "Could not find ref with POC", a lost reference picture).
typedef struct cffmpeg_error_counter {
    uint32_t magic;   /* CFFMPEG_ERROR_COUNTER_MAGIC, so that a foreign `opaque` is never touched */
    int32_t errors;   /* error-level lines so far, updated atomically */
} cffmpeg_error_counter;

#define CFFMPEG_ERROR_COUNTER_MAGIC 0x47564543u

/// What a network source hears from libavformat's RTMP listener, which only logs a publish to a stream key other
/// than the one in its URL ("Unexpected stream %s, expecting %s") and goes on serving it. The hook receives the
/// expected key (the listener's own, from its URL) so that the listener waiting for it can refuse the publisher.
typedef void (*cffmpeg_rtmp_mismatch_hook)(const char *expected);
static cffmpeg_rtmp_mismatch_hook cffmpeg_rtmp_hook = NULL;

static void cffmpeg_counting_log_callback(void *avcl, int level, const char *fmt, va_list vl);

/// Sets the hook told about RTMP publishes to an unexpected stream key (set once, before any RTMP listener opens),
/// and installs the log callback of the same translation unit: a static variable in this header exists once per
/// unit that uses it, so the callback that reads the hook must be the one installed with it.
static inline void cffmpeg_set_rtmp_mismatch_hook(cffmpeg_rtmp_mismatch_hook hook) {
    __atomic_store_n(&cffmpeg_rtmp_hook, hook, __ATOMIC_RELEASE);
    av_log_set_callback(cffmpeg_counting_log_callback);
}

/// The log callback: counts error-level lines of codec contexts that carry a counter, tells the RTMP hook about a
/// publish to an unexpected stream key, then logs as FFmpeg would.
static void cffmpeg_counting_log_callback(void *avcl, int level, const char *fmt, va_list vl) {
    if (fmt != NULL && level <= AV_LOG_WARNING && strcmp(fmt, "Unexpected stream %s, expecting %s\n") == 0) {
        cffmpeg_rtmp_mismatch_hook hook = __atomic_load_n(&cffmpeg_rtmp_hook, __ATOMIC_ACQUIRE);
        if (hook != NULL) {
            va_list args;
            va_copy(args, vl);
            (void)va_arg(args, const char *);            /* the key the publisher presented: never kept */
            const char *expected = va_arg(args, const char *);
            va_end(args);
            if (expected != NULL) hook(expected);
        }
    }
    if (avcl != NULL && level <= AV_LOG_ERROR) {
        const AVClass *cls = *(const AVClass **)avcl;
        if (cls != NULL && cls->class_name != NULL && strcmp(cls->class_name, "AVCodecContext") == 0) {
            cffmpeg_error_counter *counter = (cffmpeg_error_counter *)((AVCodecContext *)avcl)->opaque;
            if (counter != NULL && counter->magic == CFFMPEG_ERROR_COUNTER_MAGIC) {
                __atomic_fetch_add(&counter->errors, 1, __ATOMIC_RELAXED);
            }
        }
    }
    av_log_default_callback(avcl, level, fmt, vl);
}

/// Installs the counting log callback (process-wide; it forwards everything to FFmpeg's default logger).
static inline void cffmpeg_install_counting_log_callback(void) { av_log_set_callback(cffmpeg_counting_log_callback); }

/// Reads a counter's error count.
static inline int32_t cffmpeg_error_count(const cffmpeg_error_counter *counter) {
    return __atomic_load_n(&counter->errors, __ATOMIC_RELAXED);
}

/// Cancels blocking libavformat calls (opening a network input, reading from it): `stop` ends them for good (the
/// run stops), `deadline_us` (on av_gettime_relative's clock, 0 for none) ends the current call when it passes.
typedef struct cffmpeg_interrupt {
    int32_t stop;          /* 1: cancel every call from now on; read and written atomically */
    int32_t timed_out;     /* 1: the last interruption was the deadline's */
    int64_t deadline_us;   /* read and written atomically */
} cffmpeg_interrupt;

/// libavformat's interrupt callback over a `cffmpeg_interrupt` (nonzero: give up the blocking call).
static int cffmpeg_interrupt_callback(void *opaque) {
    cffmpeg_interrupt *interrupt = (cffmpeg_interrupt *)opaque;
    if (interrupt == NULL) return 0;
    if (__atomic_load_n(&interrupt->stop, __ATOMIC_ACQUIRE)) return 1;
    int64_t deadline = __atomic_load_n(&interrupt->deadline_us, __ATOMIC_ACQUIRE);
    if (deadline > 0 && av_gettime_relative() > deadline) {
        __atomic_store_n(&interrupt->timed_out, 1, __ATOMIC_RELEASE);
        return 1;
    }
    return 0;
}

/// The callback record to hang on an `AVFormatContext` before it opens.
static inline AVIOInterruptCB cffmpeg_interrupt_record(cffmpeg_interrupt *interrupt) {
    AVIOInterruptCB record = { cffmpeg_interrupt_callback, interrupt };
    return record;
}

/// Cancels every blocking call from now on (any thread).
static inline void cffmpeg_interrupt_stop(cffmpeg_interrupt *interrupt) {
    __atomic_store_n(&interrupt->stop, 1, __ATOMIC_RELEASE);
}

/// Whether ``cffmpeg_interrupt_stop`` was called.
static inline int cffmpeg_interrupt_stopped(cffmpeg_interrupt *interrupt) {
    return __atomic_load_n(&interrupt->stop, __ATOMIC_ACQUIRE);
}

/// Ends calls that run past `after_us` microseconds from now (0: no deadline); clears the timed-out mark.
static inline void cffmpeg_interrupt_set_deadline(cffmpeg_interrupt *interrupt, int64_t after_us) {
    __atomic_store_n(&interrupt->timed_out, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&interrupt->deadline_us, after_us > 0 ? av_gettime_relative() + after_us : 0, __ATOMIC_RELEASE);
}

/// Whether the last interruption was the deadline's.
static inline int cffmpeg_interrupt_timed_out(cffmpeg_interrupt *interrupt) {
    return __atomic_load_n(&interrupt->timed_out, __ATOMIC_ACQUIRE);
}

#endif
