import GlassesBridge
import GlassesSimulator
/// The help texts of `glasses-bridge`: what it does, every option, examples and exit codes.
package enum BridgeHelp {
    /// The version string printed by `--version`.
    package static let version = "glasses-bridge 0.1.0"

    /// A simulator range as the help writes it: `25-240`.
    private static func range(_ range: ClosedRange<Double>) -> String {
        "\(SubjectProfile.format(range.lowerBound))-\(SubjectProfile.format(range.upperBound))"
    }

    /// The one-line usage, printed after a usage error.
    package static let usageLine = "usage: glasses-bridge [--device DEVICE]... [--fps N] [--resolution R] [options]   (see --help)"

    /// The usage line of the command `arguments` name (`devices`, `report`, `check`, or the run).
    package static func usageLine(for arguments: [String]) -> String {
        switch arguments.first {
        case "devices": "usage: glasses-bridge devices [--format text|ndjson]   (see glasses-bridge devices --help)"
        case "report":
            "usage: glasses-bridge report RUN.ndjson [--truth FILE | --reference FILE] [--traces-at S] -o PAGE.html   (see glasses-bridge report --help)"
        case "check": "usage: glasses-bridge check [--device DEVICE | --listen ADDR] [options]   (see glasses-bridge check --help)"
        default: usageLine
        }
    }

    /// The main help text.
    package static let main = """
    glasses-bridge: smart-glasses camera stream -> SmartSpectra custom input -> live vitals.

    It connects to a pair of glasses (or the built-in simulator), asks for a camera stream, decodes it,
    feeds every frame to custom input on one monotonic timeline, and prints pulse, breathing and HRV.
    Pauses, stalled ("zombie") streams, lost links and ended sessions are handled for you.

    USAGE
      glasses-bridge [options]            stream and measure until Ctrl-C, --duration or end of file
      glasses-bridge devices [--format text|ndjson]
                                          list the devices that can be reached
      glasses-bridge report RUN.ndjson [--truth F | --reference F] -o PAGE.html
                                          an HTML report of a saved run (report --help)
      glasses-bridge check --device DEVICE|--listen ADDR [--plan FILE] [--junit PATH]
                                          run the hardware-in-the-loop checks (check --help)
      glasses-bridge help | --help        this text
      glasses-bridge --version            the version

    SOURCE
      --device DEVICE       where the glasses are (default: sim)
                              sim                    built-in simulated glasses, in this process
                              unix:PATH              a glasses-sim or relay on a Unix socket
                              tcp:HOST:PORT          a glasses-sim or a relay over TCP: real Meta glasses are
                                                     reached through a relay on a phone (docs/REAL-GLASSES.md)
                              bt:ADDRESS[@CHANNEL]   a relay or board speaking the link protocol over RFCOMM
                                                     (not Meta's glasses: they speak only to DAT on a phone)
                              file:PATH              a recording (.y4m, .mp4, .mkv), e.g. one made with --record
                              rtmp://HOST:PORT/APP/KEY
                                                     listen for a phone app's RTMP publish (H.264 in FLV);
                                                     a publish to any other stream key is refused; or
                                                     rtmp://HOST:PORT/APP with --token KEY
                              srt://HOST:PORT?mode=listener
                                                     listen for an SRT publisher (MPEG-TS, HEVC or H.264);
                                                     its passphrase from --token, GLASSES_TOKEN or
                                                     &passphrase=… (10-79 characters; required off
                                                     loopback); srt://HOST:PORT dials a publisher
                                                     that listens (mode=caller)
                              rtsp://[USER@]HOST:PORT/PATH
                                                     pull from an app that serves RTSP (H.264 or HEVC;
                                                     RTP inside the RTSP connection, or &transport=udp);
                                                     the password from --token or USER:PASSWORD@
                              rtsp://127.0.0.1:PORT/PATH?mode=listener
                                                     be the RTSP server a publisher records to (ffmpeg
                                                     -f rtsp); this machine only (no credentials)
                              udp://127.0.0.1:PORT   MPEG-TS datagrams from this machine only (UDP has
                                                     no secret; use srt:// for a phone)
                            a stream brings its own codec, size and rate (--fps, --codec and --resolution
                            do not apply; the size may change mid-stream); its audio is ignored; a
                            publisher that leaves is listened for again (srt caller, rtsp pull: dialled
                            again)
                            give it several times for several glasses in one process: each device runs
                            on its own (session, timeline, engine, accounting); output names each by its
                            form, with #N when a form repeats (--device sim --device sim: sim#1, sim#2);
                            the k-th simulator (from 0) gets seed --sim-seed + k; one device failing does
                            not stop the others; --record, --video-out, --report and --truth-out take
                            one device
      --listen ADDR         wait for a relay to dial in instead (tcp:HOST:PORT or unix:PATH): for phones
                            behind NAT or on a hotspot; one relay at a time, others are refused
      --token TOKEN         pairing token for any address that is not loopback (or set GLASSES_TOKEN,
                            which keeps it out of ps): presented when dialling, required of a relay that
                            dials in; a wrong or missing token is refused at once; for rtmp:// the
                            stream key, for srt:// the passphrase, for rtsp:// the server's password
      --connect-timeout S   how long to wait for the device to connect (default: 10 when dialling,
                            60 with --listen or a stream listener); a dialled address where nothing listens yet is
                            tried again until then; if none ever connects the run ends with exit 69
      --fps N               frames per second: 2, 7, 15, 24 or 30 (default: 24); vitals are measured
                            at 15, 24 and 30; 7 runs with a warning and is never stable; 2 carries
                            no pulse or HRV (refused unless --metrics asks for breathing only)
      --resolution R        high (720x1280), medium (504x896) or low (360x640) (default: medium)
      --codec C             raw (decoded NV12) or hvc1 (compressed HEVC, decoded here) (default: raw)
      --realtime            pace the simulator and file playback like a clock (default)
      --no-realtime         run the simulator and file playback as fast as the CPU allows

    MEASUREMENT
      --metrics LIST        comma-separated bundles and single metrics (default: breathing,cardio)
                              bundles: breathing, cardio
                              single:  pulse-rate, hrv, breathing-rate, arterial-pressure-trace,
                                       chest-breathing, abdomen-breathing
                            SmartSpectra's other names (bundles face, eda; breathing-amplitude,
                            apnea, respiratory-line-length, baseline, inhale-exhale-ratio, eda-trace,
                            face-landmarks, blinking, talking, expressions) are refused (64): the
                            embedded engine does not produce them
      --pixel-format F      layout submitted to custom input: bgra or nv12 (default: nv12)
      --transform T         none, rotate90cw, rotate90ccw, rotate180, mirror-horizontal, mirror-vertical
                            (default: none; the glasses already send upright portrait frames)
      --duration SECONDS    stop after this many seconds from the start, up to 1e9 (virtual seconds
                            with --no-realtime; default: run until Ctrl-C or the end of the file)
      --motion              also ask the glasses for their IMU (DAT 1.0 Motion, 30 Hz) and say in the
                            summary how far its clock is from the video's, found by setting the gyroscope
                            against the background's motion; glasses only (not files or streams); the
                            vitals do not use the IMU yet (docs/VITALS-ENGINE.md)

    SIMULATOR (only with --device sim; with several, every simulator)
      --sim-pulse BPM       the simulated person's pulse, \(range(SubjectProfile.pulseRateRange)) (default: 72)
      --sim-breathing BRPM  the simulated breathing rate, \(range(SubjectProfile.breathingRateRange)) (default: 15)
      --sim-seed N          random seed, for reproducible runs (default: 1)
      --sim-scenario FILE   a scenario to play (taps, fold, doff, thermal, link loss, faults)

    OUTPUT
      --format F            text (default), ndjson or csv
                              text:   one live status line on a terminal (fits its width; a value
                                      followed by ? is not stable yet), timestamped lines otherwise
                              ndjson: one JSON object per event, starting with {"type":"start",
                                      "schemaVersion":1,...} and ending with {"type":"summary",...};
                                      schemas in docs/schema/; several devices: schemaVersion 2,
                                      "devices" in the start line, "device" in every line, a summary
                                      per device and {"type":"totals",...} last
                              csv:    the vitals time series: time_s,metric,value,confidence,stable
                                      (several devices: a device column first)
      --output PATH, -o     write there instead of standard output ('-' is standard output)
      --quiet, -q           text: print only errors and the summary
      --verbose, -v         text: also notices (restarts, retries, the source) and more stats lines
      --record PATH         keep what the glasses sent: raw -> .y4m, hvc1 -> .mp4 (tagged hvc1) or .mkv
                            (passthrough); Y4M has no timestamps, so a raw recording ends the run
                            (exit 73) at the first pause or dropped frame: use hvc1 for those
      --video-out PATH.y4m  write the frames exactly as submitted to custom input (NV12 only)
      --report PATH.html    when the run ends (also after Ctrl-C), write its report: one self-contained
                            page of plots (see glasses-bridge report --help)
      --truth-out FILE      simulator only: when the run ends, write the truth it rendered on the run's
                            clock (.csv or .ndjson, keys pulseRate, breathingRate, hrvRmssd; 10 a second)
      --serve-metrics tcp:HOST:PORT
                            serve the run's metrics to Prometheus on http://HOST:PORT/metrics (OpenMetrics:
                            frames, drops by reason, restarts, reconnects, latency histogram, stream state,
                            vitals with confidence and stable flags; one label set per device); loopback
                            unless --token is given, and with --token (or GLASSES_TOKEN) every request needs
                            Authorization: Bearer TOKEN; port 0 picks a free port; where it serves is said
                            on standard error (docs/PROMETHEUS.md)
      --lsl NAME            publish Lab Streaming Layer streams NAME-pulse, NAME-breathing, NAME-hrv
                            (value, confidence, stable), NAME-pulse-wave, NAME-breathing-wave (at the
                            frame rate) and NAME-markers (state changes, verdicts), stamped on LSL's clock
                            at the frames' capture times (several devices: NAME-DEVICE-…); needs liblsl
                            (pip install pylsl, or GLASSES_LSL_LIBRARY=liblsl.so or its folder; 69 without)
                            and the live clock (not --no-realtime); docs/LSL.md
      --reference lsl:NAME_OR_TYPE
                            compare the run live with a chest strap on LSL (bpm in its first channel),
                            found by name, else by type (lsl:HeartRate), LSL's clock offset applied: its
                            heart rate beside each stats line's pulse ("ref"), the pulse's mean |error|
                            in the summary, the report's reference plot; one live device (not a file, not
                            --no-realtime); 69 when liblsl is missing or no stream answers within 10 s

    EXAMPLES
      glasses-bridge --fps 24 --resolution medium
          live vitals from the built-in simulator (or use Scripts/run, which sets up and builds first)
      glasses-bridge --no-realtime --duration 60 --format ndjson --sim-pulse 80
          one simulated minute as fast as possible, as JSON lines; the summary holds the truth
      glasses-bridge --device unix:/tmp/glasses.sock --codec hvc1 --record session.mkv
          a glasses-sim on a socket, HEVC decoded here and kept in session.mkv
      glasses-bridge --device file:session.mkv --format csv -o vitals.csv
          replay a recording and save the vitals time series
      GLASSES_TOKEN=… glasses-bridge --listen tcp:0.0.0.0:7100
          wait for the phone relay (real glasses through DAT) to dial this machine
      glasses-bridge --device tcp:127.0.0.1:7200
          dial a glasses-relay (or glasses-sim) on this machine
      GLASSES_TOKEN=… glasses-bridge --device rtmp://0.0.0.0:1935/live
          take a phone app's RTMP stream (server rtmp://THIS-HOST:1935/live, stream key = the token);
          rehearse: ffmpeg -re -i clip.mp4 -c:v libx264 -c:a aac -f flv rtmp://127.0.0.1:1935/live/KEY
      GLASSES_TOKEN=… glasses-bridge --device 'srt://0.0.0.0:7200?mode=listener'
          take an SRT stream (passphrase = the token); rehearse:
          ffmpeg -re -i clip.mp4 -c:v libx265 -f mpegts 'srt://127.0.0.1:7200?passphrase=…'
      glasses-bridge --device bt:12:34:56:78:9A:BC@5 --token T --metrics cardio
          a relay or board over Bluetooth RFCOMM (not Meta's glasses: they speak only to DAT on a phone)
      glasses-bridge --no-realtime --duration 90 --format ndjson -o run.ndjson --report run.html
          a simulated run saved as JSON lines, and its report with the truth on the same axes
      glasses-bridge --device sim --device sim --device tcp:127.0.0.1:7200 --format ndjson
          three glasses in one process (sim#1, sim#2 and a relay), one live line each in text,
          every NDJSON line tagged "device", a summary per device, then the totals
      glasses-bridge --device sim --serve-metrics tcp:127.0.0.1:9464
          live vitals, and the same run for Prometheus to scrape at http://127.0.0.1:9464/metrics
      glasses-bridge --lsl glasses
          live vitals for LabRecorder beside a chest strap, on one clock (docs/LSL.md)
      glasses-bridge devices
          what can be reached from here

    EXIT CODES
      0   the run ended normally: --duration reached, end of file, Ctrl-C (SIGINT), SIGTERM or SIGHUP
          once frames flowed (stopped before any frame arrived: 69)
      64  usage error: a bad option or value; nothing was started
      65  bad input data: a recording that is malformed or truncated
      69  device unavailable: cannot connect, no device (or stream publisher) connected within
          --connect-timeout, no Bluetooth, the --serve-metrics address in use or not this machine's,
          --lsl without liblsl, no frame arrived, the glasses lost and not back when the run ended, or
          the glasses stopped the stream for a reason a person must fix (too hot, battery low,
          permission denied, repeated stalls)
      70  internal error
      73  an output (--output, --record, --video-out, --report, --truth-out) cannot be written or completed
      several devices: 0 only when every device did what was asked; otherwise the most severe of
      the devices' codes (70, then 73, 69, 65); the totals say which device ended how
    """

    /// The help text of `glasses-bridge devices`.
    package static let devices = """
    glasses-bridge devices: list the devices that can be reached from this machine.

    It always lists the built-in simulator (--device sim). Where the machine has Bluetooth it lists the
    paired devices (--device bt:ADDRESS); where it has none it says so in one line. It ends with how to
    reach socket-served glasses. --format ndjson prints the same entries, one JSON object each.

    USAGE
      glasses-bridge devices [--format text|ndjson]

    EXAMPLES
      glasses-bridge devices
      glasses-bridge devices --format ndjson

    EXIT CODES
      0 listed (even when only the simulator is available), 64 usage error, 70 internal error
    """
}
