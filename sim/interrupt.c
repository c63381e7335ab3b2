#include "sim/interrupt.h"
#include <stdbool.h>
#include <string.h>

volatile sig_atomic_t interrupt_signal;

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction saved[3];
static bool armed[3];

static void note(int sig)
{
    interrupt_signal = sig;
}

void interrupt_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = note;
    sa.sa_flags = SA_RESETHAND; /* the second signal takes the default action: it kills */
    sigemptyset(&sa.sa_mask);
    interrupt_signal = 0;
    for (size_t i = 0; i < (sizeof caught / sizeof caught[0]); i++) {
        if (armed[i] || sigaction(caught[i], NULL, &saved[i]) != 0)
            continue;
        if (saved[i].sa_handler == SIG_IGN)
            continue; /* ignored on purpose (nohup, a background job): leave it so */
        armed[i] = sigaction(caught[i], &sa, NULL) == 0;
    }
}

void interrupt_release(void)
{
    for (size_t i = 0; i < (sizeof caught / sizeof caught[0]); i++)
        if (armed[i]) {
            sigaction(caught[i], &saved[i], NULL);
            armed[i] = false;
        }
    interrupt_reraise();
}

void interrupt_reraise(void)
{
    int sig = interrupt_signal;
    if (!sig)
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}

const char *interrupt_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}
