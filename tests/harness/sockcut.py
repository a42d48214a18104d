#!/usr/bin/env python3
"""A relay between the clients of a Unix socket and the socket, that can be
cut: a network partition as the clients see it. While cut nothing passes
either way and no connection closes (a statement waits for its answer, as
over a network that drops everything); a connection made meanwhile is
held; heal() lets it all through again.

    r = SockCut(target_socket, listen_socket).start()
    r.cut(); r.heal(); r.stop()

For PostgreSQL: listen on DIR/.s.PGSQL.5432 and give the clients that
should be cut off a URI with host=DIR. Standard library only; one thread;
every socket it made is closed by stop()."""

import os
import selectors
import socket
import threading

CHUNK = 65536


class SockCut:
    def __init__(self, target, path):
        self.target, self.path = target, path
        self.srv = None
        self.lock = threading.Lock()
        self.is_cut = False
        self.stopping = False
        self.peer = {}          # each relayed socket -> the other end
        self.held = []          # clients accepted while cut
        self.thread = None

    def start(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        os.chmod(self.path, 0o777)
        self.srv.listen(128)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def cut(self):
        with self.lock:
            self.is_cut = True

    def heal(self):
        with self.lock:
            self.is_cut = False

    def stop(self):
        self.stopping = True
        if self.thread:
            self.thread.join(5)
        for s in list(self.peer) + self.held + ([self.srv] if self.srv else []):
            s.close()
        self.peer, self.held, self.srv = {}, [], None
        if os.path.exists(self.path):
            os.unlink(self.path)

    def _join(self, client):
        backend = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            backend.connect(self.target)
        except OSError:
            backend.close()
            client.close()
            return
        self.peer[client], self.peer[backend] = backend, client

    def _drop(self, s):
        other = self.peer.pop(s, None)
        if other is not None:
            self.peer.pop(other, None)
            other.close()
        s.close()

    def _pass(self, s):
        try:
            data = s.recv(CHUNK)
            if data:
                self.peer[s].sendall(data)
                return
        except OSError:
            pass
        self._drop(s)

    def _run(self):
        while not self.stopping:
            with self.lock:
                cut = self.is_cut
            if not cut:
                for c in self.held:
                    self._join(c)
                self.held = []
            sel = selectors.DefaultSelector()
            sel.register(self.srv, selectors.EVENT_READ)
            for s in ([] if cut else list(self.peer)):
                sel.register(s, selectors.EVENT_READ)
            ready = sel.select(0.05)
            sel.close()
            for key, _ in ready:
                s = key.fileobj
                if s is self.srv:
                    c, _ = self.srv.accept()
                    if cut:
                        self.held.append(c)
                    else:
                        self._join(c)
                elif s in self.peer:
                    self._pass(s)
