/* SIGINT, SIGTERM and SIGHUP while a results folder is being written: the handler only notes
 * the signal; the run stops at its next check, removes its temporary folder and then dies of
 * the same signal (so a shell or a sweep sees how it ended). A second signal kills at once. */
#ifndef ROCESIM_INTERRUPT_H
#define ROCESIM_INTERRUPT_H
#include <signal.h>

/* The signal caught since interrupt_catch(), 0 if none. */
extern volatile sig_atomic_t interrupt_signal;

void interrupt_catch(void);
/* Back to the default dispositions; a signal caught meanwhile is delivered now. */
void interrupt_release(void);
/* Restores the default disposition of a caught signal and raises it again. */
void interrupt_reraise(void);
/* "SIGTERM" etc. */
const char *interrupt_name(int sig);

#endif
