"""3. Blobs: the resident memory of postern-blob while it moves a 200 MiB
blob up and down, and download throughput against lighttpd serving the
same bytes as a static file (and against the mail server itself).
bench/blob.py does the measuring."""

from common import log


def run(args, tmp):
    import blob
    log(f"blobs: {args.blob_mib} MiB each way ...")
    return blob.measure(args.blob_mib, 3 if args.quick else 5)
