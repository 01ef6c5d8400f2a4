"""A real LSL consumer for the bridge's tests: resolves the streams NAME-<suffix>, pulls every sample as it comes
and prints one JSON object: each stream's metadata and samples (timestamp, values, the local clock when pulled).

Usage: python lsl_consume.py NAME SUFFIX[,SUFFIX…] TIMEOUT_SECONDS
Prints "ready <lsl clock>" on stderr once every inlet is open; ends after the marker "state:finished" (and a short
drain), or at the timeout. Exit 2 when a stream never appears.
"""
import json
import sys
import time

import pylsl


def channels(info):
    out = []
    channel = info.desc().child("channels").child("channel")
    while not channel.empty():
        out.append({"label": channel.child_value("label"), "unit": channel.child_value("unit"),
                    "type": channel.child_value("type")})
        channel = channel.next_sibling("channel")
    return out


def main():
    name, suffixes, timeout = sys.argv[1], sys.argv[2].split(","), float(sys.argv[3])
    deadline = time.monotonic() + timeout
    inlets = {}
    while len(inlets) < len(suffixes):
        if time.monotonic() > deadline:
            missing = [s for s in suffixes if s not in inlets]
            print(f"streams not found: {missing}", file=sys.stderr)
            sys.exit(2)
        for suffix in suffixes:
            if suffix in inlets:
                continue
            found = pylsl.resolve_byprop("name", f"{name}-{suffix}", 1, 0.2)
            if found:
                inlet = pylsl.StreamInlet(found[0], max_buflen=360, recover=False)
                inlet.open_stream(timeout=5)
                inlets[suffix] = inlet
    connected = pylsl.local_clock()
    print(f"ready {connected}", file=sys.stderr, flush=True)
    result = {"connectedAt": connected, "streams": {}}
    for suffix, inlet in inlets.items():
        info = inlet.info(timeout=5)
        result["streams"][suffix] = {
            "name": info.name(), "type": info.type(), "sourceID": info.source_id(),
            "nominalRate": info.nominal_srate(), "channelCount": info.channel_count(),
            "channels": channels(info),
            "manufacturer": info.desc().child("acquisition").child_value("manufacturer"),
            "deviceLabel": info.desc().child("device").child_value("label"),
            "samples": [],
        }
    finished_at = None
    while inlets and time.monotonic() < deadline:
        if finished_at is not None and time.monotonic() > finished_at + 0.5:
            break
        got = False
        for suffix, inlet in list(inlets.items()):
            try:
                samples, stamps = inlet.pull_chunk(timeout=0.0)
            except pylsl.util.LostError:
                del inlets[suffix]  # the bridge ended: everything it sent has been pulled
                continue
            now = pylsl.local_clock()
            for values, stamp in zip(samples, stamps):
                got = True
                result["streams"][suffix]["samples"].append([stamp, values, now])
                if suffix == "markers" and values and values[0] == "state:finished" and finished_at is None:
                    finished_at = time.monotonic()
        if not got:
            time.sleep(0.001)
    json.dump(result, sys.stdout, allow_nan=True)


if __name__ == "__main__":
    main()
