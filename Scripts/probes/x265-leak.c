// Opens, uses and closes libx265 encoders through libavcodec with the options HEVCEncoder uses, then exits.
// Under LeakSanitizer every encoder leaves ~52 KB behind inside libx265 (x265::FrameFilter::init, x265_copy_params,
// x265_param_parse) although avcodec_free_context closes it (x265_encoder_close, x265_param_free): the leak is
// libx265's (3.5 on Debian 12), not the wrapper's. See docs/RELIABILITY.md, "LeakSanitizer".
//   cc -fsanitize=address Scripts/probes/x265-leak.c $(pkg-config --cflags --libs libavcodec libavutil) -o /tmp/x265-leak
//   /tmp/x265-leak 1; /tmp/x265-leak 3    # the leaked bytes grow with the number of encoders
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int encoders = argc > 1 ? atoi(argv[1]) : 1;
    for (int e = 0; e < encoders; e++) {
        const AVCodec *codec = avcodec_find_encoder_by_name("libx265");
        if (!codec) { fprintf(stderr, "no libx265 in this FFmpeg\n"); return 1; }
        AVCodecContext *ctx = avcodec_alloc_context3(codec);
        ctx->width = 504; ctx->height = 896; ctx->pix_fmt = AV_PIX_FMT_YUV420P;
        ctx->time_base = (AVRational){1, 1000000}; ctx->framerate = (AVRational){30, 1};
        ctx->bit_rate = ctx->rc_max_rate = 1000000; ctx->rc_buffer_size = 1000000;
        ctx->gop_size = 30; ctx->max_b_frames = 0; ctx->thread_count = 1; ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
        av_opt_set(ctx->priv_data, "preset", "ultrafast", 0);
        av_opt_set(ctx->priv_data, "tune", "zerolatency", 0);
        av_opt_set_int(ctx->priv_data, "forced-idr", 1, 0);
        av_opt_set(ctx->priv_data, "x265-params", "log-level=error:bframes=0:rc-lookahead=0:open-gop=0:"
                   "repeat-headers=0:keyint=30:min-keyint=1:scenecut=0:frame-threads=1:pools=none", 0);
        if (avcodec_open2(ctx, codec, NULL) < 0) { fprintf(stderr, "avcodec_open2 failed\n"); return 1; }
        AVFrame *frame = av_frame_alloc();
        frame->width = 504; frame->height = 896; frame->format = AV_PIX_FMT_YUV420P;
        av_frame_get_buffer(frame, 0);
        AVPacket *packet = av_packet_alloc();
        for (int i = 0; i < 3; i++) {
            av_frame_make_writable(frame);
            memset(frame->data[0], i * 40, (size_t)frame->linesize[0] * 896);
            memset(frame->data[1], 128, (size_t)frame->linesize[1] * 448);
            memset(frame->data[2], 128, (size_t)frame->linesize[2] * 448);
            frame->pts = i * 33333;
            avcodec_send_frame(ctx, frame);
            while (avcodec_receive_packet(ctx, packet) == 0) av_packet_unref(packet);
        }
        av_packet_free(&packet);
        av_frame_free(&frame);
        avcodec_free_context(&ctx);  // libx265_encode_close: x265_param_free, x265_encoder_close
    }
    return 0;
}
