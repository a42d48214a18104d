/* private: what a process that holds people's passwords does at start so
 * that others on the machine cannot read them out of its memory. */
#ifndef POSTERN_PRIVATE_H
#define POSTERN_PRIVATE_H

/* Makes the process non-dumpable: no core file, and no ptrace or
 * /proc/PID/mem by other processes of the same user (root still can).
 * Failure is logged, not fatal. */
void private_memory(void);

#endif
