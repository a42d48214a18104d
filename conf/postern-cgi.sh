#!/bin/sh
# A responder for a shared host whose Apache has mod_fcgid, when postern
# was not built with the folders it is installed in (see
# postern.htaccess). Copy this file into the web root's cgi-bin/ three
# times, as postern-auth.cgi, postern-jmap.cgi and postern-blob.cgi
# (mode 0755), and write the two paths in below.
#
# Why: a responder reads POSTERN_CONF from its environment once, at
# start, and mod_fcgid gives the processes it starts no variable that
# .htaccess can set (SetEnv reaches each request's parameters, not the
# process). This script sets it and then becomes the responder its own
# name says (exec: the FastCGI socket mod_fcgid hands over on descriptor
# 0 stays, and the process serves request after request as usual). It
# works under plain CGI as well, for one shell start per request.
POSTERN_CONF=/home/example/postern/etc/postern/postern.conf
POSTERN_LIBEXEC=/home/example/postern/libexec/postern
export POSTERN_CONF
name=${0##*/}
exec "$POSTERN_LIBEXEC/${name%.cgi}"
