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

/// The log callback: counts error-level lines of codec contexts that carry a counter, then logs as FFmpeg would.
static void cffmpeg_counting_log_callback(void *avcl, int level, const char *fmt, va_list vl) {
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

#endif
