#include "seat.h"

#include <stddef.h>

#include <sys/mman.h>

static uint64_t *seats;          /* shared by the pool; NULL outside one */
static int n_seats;
static int mine = -1;

int seat_open(int n)
{
	void *p;

	if (n < 1 || n > SEAT_MAX)
		return -1;
	p = mmap(NULL, (size_t)n * sizeof(*seats), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	seats = p;
	n_seats = n;
	return 0;
}

void seat_mine(int i)
{
	mine = i;
}

void seat_free(int i)
{
	if (seats && i >= 0 && i < n_seats)
		__atomic_store_n(&seats[i], 0, __ATOMIC_SEQ_CST);
}

/* FNV-1a, never 0 (0 is a free seat). */
uint64_t seat_hash(const char *client)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *client; client++)
		h = (h ^ (unsigned char)*client) * 1099511628211ULL;
	return h | 1;
}

int seat_allowed(const uint64_t *others, int n_others, uint64_t me)
{
	int busy = 0, same = 0, i;

	for (i = 0; i < n_others; i++) {
		busy += others[i] != 0;
		same += others[i] == me;
	}
	return !(busy == n_others && same > 0);
}

/* The seat is marked before the others are read, so that two processes
 * taking the last two seats at once for one client see each other (then
 * both refuse: the cautious side). */
int seat_take(const char *client)
{
	uint64_t others[SEAT_MAX], me = seat_hash(client);
	int i, k = 0;

	if (!seats || mine < 0)
		return 0;
	__atomic_store_n(&seats[mine], me, __ATOMIC_SEQ_CST);
	for (i = 0; i < n_seats; i++)
		if (i != mine)
			others[k++] = __atomic_load_n(&seats[i], __ATOMIC_SEQ_CST);
	if (seat_allowed(others, k, me))
		return 0;
	__atomic_store_n(&seats[mine], 0, __ATOMIC_SEQ_CST);
	return -1;
}

void seat_leave(void)
{
	seat_free(mine);
}
