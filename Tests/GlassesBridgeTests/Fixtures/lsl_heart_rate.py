"""A heart-rate source on LSL for the bridge's tests, as a chest strap's bridge would publish it: a stream of type
HeartRate (bpm in channel 1), one reading every half second stamped on LSL's clock.

Usage: python lsl_heart_rate.py NAME BPM SECONDS
Prints "ready" on stdout once the outlet exists; stops after SECONDS.
"""
import sys
import time

import pylsl


def main():
    name, bpm, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    info = pylsl.StreamInfo(name, "HeartRate", 1, 2.0, "float32", f"test-strap/{name}")
    channel = info.desc().append_child("channels").append_child("channel")
    channel.append_child_value("label", "HeartRate")
    channel.append_child_value("unit", "bpm")
    outlet = pylsl.StreamOutlet(info)
    print("ready", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        outlet.push_sample([bpm], pylsl.local_clock())
        time.sleep(0.5)


if __name__ == "__main__":
    main()
