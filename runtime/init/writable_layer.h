/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_WRITABLE_LAYER_H
#define AGENTSBX_WRITABLE_LAYER_H

/*
 * The policy's writable layer over the read-only image (writable_layer.c),
 * in the container's new mount namespace.
 */

#include <stdbool.h>

#include "../../lib/error.h"

struct ctx_decided;
struct ctx_handles;
struct ctx_init;

/* An overlay on d->rootfs: the image as its read-only lower layer, a
 * detached tmpfs of d->decision.writable_layer bytes as its upper.  On a
 * failure *attached says the tmpfs could not be taken off the rootfs path
 * again (nothing may then be built on that path). */
int writable_layer_mount(const struct ctx_decided *d, const struct ctx_handles *h,
			 bool *attached, struct error *err);

/* The layer could not be built (nothing attached): a read-only root
 * instead (i->writable_layer_lost), logged and in the audit log. */
void writable_layer_fell_back(const struct ctx_decided *d, struct ctx_init *i,
			      const struct error *why);

/* A root-owned process.cwd on the layer given to the process's uid when
 * the policy runs it as non-root (a copy-up; the image is unchanged). */
int writable_layer_own_cwd(const struct ctx_decided *d, const struct ctx_handles *h,
			   const struct ctx_init *i, int cwd, struct error *err);

#endif
