/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_WRITABLE_LAYER_H
#define AGENTSBX_WRITABLE_LAYER_H

/*
 * The policy's writable layer over the read-only image (writable_layer.c),
 * in the container's new mount namespace.
 */

#include "../../lib/error.h"

struct container_ctx;

/* An overlay on c->rootfs: the image as its read-only lower layer, a
 * detached tmpfs of c->decision.writable_layer bytes as its upper. */
int writable_layer_mount(struct container_ctx *c, struct error *err);

/* A root-owned process.cwd on the layer given to the process's uid when
 * the policy runs it as non-root (a copy-up; the image is unchanged). */
int writable_layer_own_cwd(struct container_ctx *c, int cwd, struct error *err);

#endif
