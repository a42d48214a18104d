#!/usr/bin/env python3
"""The integration suite under a real Apache with mod_proxy_fcgi
(conf/apache-postern.conf): the responders as FastCGI servers on their
own sockets, the event stream through to pushd."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apache_checks as ac  # noqa: E402

sys.exit(ac.main([("proxy_fcgi", [ac.static_and_api_headers, ac.attachments,
                                   ac.chunked_bodies, ac.event_stream,
                                   ac.private_memory])]))
