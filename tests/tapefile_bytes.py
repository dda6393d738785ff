"""The tape file layout as docs/tape-format.md states it, written out
independently of adsim/tapefile.py: the tests read and alter files through
these helpers, so a file that does not match the documented layout fails
them. Also used by the fuzzing child process (tests/test_tapefile_fuzz.py)."""
import hashlib
import struct

MAGIC = b"\x89adsim-tape\r\n\x1a\n\x00"
ITEM = {1: 1, 2: 2, 3: 4, 4: 8, 5: 8, 6: 1}


def layout(data):
    """(header length up to the digest, payload offset) of a tape file."""
    (n_version,) = struct.unpack_from("<I", data, 20)
    body = 24 + n_version + 8
    return body, body + 32


def resign(data):
    """``data`` with its digest recomputed: an altered file that passes the
    digest, as a hostile writer would make it."""
    data = bytes(data)
    body, payload = layout(data)
    digest = hashlib.sha256(data[:body] + data[payload:]).digest()
    return data[:body] + digest + data[payload:]


def sections(data):
    """Every section of every tape: (tape, tag, type code, count, offset of
    the count field, offset of the data)."""
    _, pos = layout(data)
    (n_tapes,) = struct.unpack_from("<I", data, pos)
    pos += 4
    out = []
    for tape in range(n_tapes):
        (n_sections,) = struct.unpack_from("<I", data, pos)
        pos += 4
        for _ in range(n_sections):
            tag, code, count = struct.unpack_from("<4sB3xQ", data, pos)
            out.append((tape, tag.decode(), code, count, pos + 8, pos + 16))
            pos += 16 + count * ITEM[code]
    assert pos == len(data), "bytes after the last section"
    return out


def section(data, tag, tape=0):
    """(type code, count, data offset) of one section."""
    for t, name, code, count, _, at in sections(data):
        if t == tape and name == tag:
            return code, count, at
    raise KeyError(tag)


def replace_section(data, tag, new_bytes, tape=0, count=None):
    """``data`` with the contents of one section replaced (and re-signed)."""
    code, old_count, at = section(data, tag, tape)
    count = len(new_bytes) // ITEM[code] if count is None else count
    head = bytearray(data[:at])
    struct.pack_into("<Q", head, at - 8, count)
    out = bytes(head) + bytes(new_bytes) + bytes(data[at + old_count * ITEM[code]:])
    body, payload = layout(out)
    out = out[:body - 8] + struct.pack("<Q", len(out) - payload) + out[body:]
    return resign(out)
