#!/usr/bin/env python3
"""The integration suite under a real Apache with mod_fcgid
(conf/apache-fcgid.conf): Apache spawns the responders, pushd is reached
through mod_proxy_fcgi."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apache_checks as ac  # noqa: E402

sys.exit(ac.main([("fcgid", [ac.static_and_api_headers, ac.attachments, ac.chunked_bodies,
                              ac.event_stream, ac.fcgid_keeps_processes])]))
