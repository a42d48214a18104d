/* replay.h: the main() of a fuzz target built without libFuzzer. It
 * replays the files named on the command line, or every file of the
 * target's stored corpus (tests/fuzz/corpus/FUZZ_CORPUS under
 * POSTERN_SRCDIR), through LLVMFuzzerTestOneInput and prints TAP, so that
 * make check runs the corpora as regression tests. A target defines
 * FUZZ_CORPUS and includes this file after its LLVMFuzzerTestOneInput. */
#ifndef POSTERN_FUZZ_REPLAY_H
#define POSTERN_FUZZ_REPLAY_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_LIBFUZZER
static int replay(const char *path, int n)
{
	static uint8_t data[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t len;

	if (f == NULL) {
		printf("not ok %d - %s (cannot open)\n", n, path);
		return 1;
	}
	len = fread(data, 1, sizeof(data), f);
	fclose(f);
	LLVMFuzzerTestOneInput(data, len);
	printf("ok %d - %s\n", n, path);
	return 0;
}

int main(int argc, char **argv)
{
	char dir[4096], path[8192];
	const char *src = getenv("POSTERN_SRCDIR");
	struct dirent *e;
	DIR *d;
	int n = 0, bad = 0, i;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			bad |= replay(argv[i], ++n);
	} else {
		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/" FUZZ_CORPUS,
		    src ? src : ".");
		if ((d = opendir(dir)) == NULL) {
			printf("1..0 # SKIP no corpus at %s\n", dir);
			return 0;
		}
		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				bad |= replay(path, ++n);
			}
		closedir(d);
	}
	printf("1..%d\n", n);
	return bad;
}
#endif

#endif
