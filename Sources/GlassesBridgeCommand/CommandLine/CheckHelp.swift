/// The help text of `glasses-bridge check`.
package enum CheckHelp {
    /// The text.
    package static let text = """
    glasses-bridge check: run a plan of conformance and accuracy checks against a device, the way a test rack
    does (hardware in the loop). Exit 0 only when every check passes.

    Each check measures one thing and holds it to a bound: the link (hello, identity and capabilities, protocol
    version, heartbeat round trip); every planned stream configuration (reaches streaming, delivered size, frame
    rate within 5 % over 10 s, monotonic timestamps, frame-interval jitter, continuity, keyframe interval for hvc1,
    decoded frames free of errors, the accounting identity, no rejected frames, link integrity, latency
    capture -> sendFrame); a photo mid-stream (arrives, decodes as JPEG, video resumes); pause/resume and link
    loss (driven on the built-in simulator; on a real device the operator is asked on a terminal, else skipped);
    a stable pulse and breathing within their warm-up bounds, and with --reference the pulse (and RMSSD) against
    a chest strap. When the glasses adapt (DAT lowers the resolution, then the rate, never below 15 fps), the
    check says so instead of failing.

    USAGE
      glasses-bridge check [--device DEVICE | --listen ADDR] [options]

    OPTIONS
      --device DEVICE       sim (default: the built-in simulator, virtual time), unix:PATH, tcp:HOST:PORT,
                            bt:ADDRESS[@CHANNEL], or a network stream (rtmp://, srt://, rtsp://, udp://; the
                            forms of glasses-bridge --help): one run of it serves the stream checks and the
                            vitals, judged against the plan's lifecycleStream (the size and rate the
                            publisher should send); the link, photo and lifecycle checks are skipped
      --listen ADDR         wait for a relay that dials in (tcp:HOST:PORT or unix:PATH)
      --token TOKEN         the pairing token (or GLASSES_TOKEN); required for any address not on loopback;
                            for a stream its key, passphrase or password, as for glasses-bridge
      --connect-timeout S   wait this long for the device (default 10 s dialling, 60 s listening; a dialled
                            address where nothing listens yet is tried again until then)
      --plan FILE           a JSON plan: checks, stream configurations, durations, tolerances (docs/HIL.md);
                            unknown keys are errors with their line and column
      --reference FILE      a reference heart-rate recording (CSV or NDJSON: time, heart rate, optional RR
                            intervals in ms, as chest-strap logger apps export them), aligned by wall-clock time
      --reference lsl:NAME_OR_TYPE
                            a live Lab Streaming Layer heart-rate stream (bpm in its first channel), found by
                            name, else by type (lsl:HeartRate), pulled during the run with LSL's clock offset
                            applied; needs liblsl (pip install pylsl; 69 without, or when no stream answers
                            within 10 s); with the built-in simulator, --realtime
      --junit PATH          also write JUnit XML (one testsuite per plan, one testcase per check)
      --format FMT          text (default) or ndjson (one object per check; docs/HIL.md)
      --realtime            run the built-in simulator in real time (default: virtual time, as fast as it goes)
      --sim-scenario FILE   faults and events for the built-in simulator (docs/SCENARIOS.md), to see checks fail
      --verbose, -v         also print the bridge's events (text)
      --help, -h            this text

    EXAMPLES
      glasses-bridge check                                       the default plan on the built-in simulator
      glasses-sim --listen tcp:127.0.0.1:7000 --token T &
      glasses-bridge check --device tcp:127.0.0.1:7000 --token T    the same plan against a glasses-sim process
      glasses-bridge check --listen tcp:0.0.0.0:7100 --token T --plan rack.json --junit results.xml
      glasses-bridge check --plan short.json --reference polar.csv --format ndjson
      glasses-bridge check --device tcp:127.0.0.1:7000 --token T --reference lsl:HeartRate
                                                                 against a chest strap publishing on LSL
      glasses-bridge check --device 'srt://0.0.0.0:7200?mode=listener' --token PASSPHRASE --junit phone.xml

    EXIT CODES
      0   every check passed (skipped checks do not fail a run)
      1   a check failed or could not run, or Ctrl-C stopped the plan (results so far kept)
      64  usage: a bad option or plan file
      65  a reference file that cannot be read as a recording
      69  the device cannot be reached (nothing connected, no hello, pairing token refused, no publisher)
      73  the --junit file cannot be written
    """
}
