"""A listening socket that takes every connection and answers nothing:
the server that never answers (hold=True keeps each connection open
until close()) or the one that hangs up at once (hold=False). For the
tests of web servers and postern facing such peers."""

import threading


class Acceptor:
    def __init__(self, sock, hold):
        """sock: bound, not yet listening; it is this object's now."""
        self.sock = sock
        self.sock.listen(128)
        self.hold = hold
        self.held = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self.hold:
                self.held.append(c)
            else:
                c.close()

    def close(self):
        self.sock.close()
        for c in self.held:
            c.close()
