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

#endif
