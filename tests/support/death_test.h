/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Runs a function in a child process and reports how it ended, with its stderr: for tests
 * of "this must end the program with a message" (POSIX; C and C++). */
#ifndef DLPM_TEST_DEATH_TEST_H
#define DLPM_TEST_DEATH_TEST_H

#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct dlpm_death {
  int signal;      /* the signal that ended the child, or 0 if it exited */
  int exit_code;   /* its exit code when it exited */
  char err[4096];  /* the start of what it wrote to stderr */
} dlpm_death;

static inline dlpm_death dlpm_run_in_child(void (*body)(void)) {
  dlpm_death d;
  int fds[2];
  pid_t pid;
  int status = 0;
  size_t used = 0;
  ssize_t got;
  memset(&d, 0, sizeof d);
  if (pipe(fds) != 0) {
    d.exit_code = -1;
    return d;
  }
  pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    body();
    _exit(0); /* reached only if body returned: the test then fails on signal == 0 */
  }
  close(fds[1]);
  while (used + 1 < sizeof d.err && (got = read(fds[0], d.err + used, sizeof d.err - 1 - used)) > 0) used += (size_t)got;
  close(fds[0]);
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) d.signal = WTERMSIG(status);
  else if (WIFEXITED(status)) d.exit_code = WEXITSTATUS(status);
  return d;
}

#endif
