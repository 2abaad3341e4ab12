/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Releasing a parsed spec.  Every function is safe on a zeroed or partly
 * filled struct (the parser relies on that when it fails half-way), and
 * spec_free()/process_free() leave the struct zeroed, so a second call is
 * harmless.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void spec_str_array_free(struct str_array *a)
{
	for (size_t i = 0; i < a->len; i++)
		free(a->items[i]);
	free(a->items);
	a->items = NULL;
	a->len = 0;
}

void spec_str_map_free(struct str_map *m)
{
	for (size_t i = 0; i < m->len; i++) {
		free(m->keys[i]);
		free(m->values[i]);
	}
	free(m->keys);
	free(m->values);
	m->keys = NULL;
	m->values = NULL;
	m->len = 0;
}

/* ---- process ---------------------------------------------------------- */

static void capabilities_free(struct oci_capabilities *caps)
{
	spec_str_array_free(&caps->bounding);
	spec_str_array_free(&caps->effective);
	spec_str_array_free(&caps->inheritable);
	spec_str_array_free(&caps->permitted);
	spec_str_array_free(&caps->ambient);
}

static void rlimits_free(struct oci_rlimit *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].type);
	free(r);
}

static void scheduler_free(struct oci_scheduler *s)
{
	free(s->policy);
	spec_str_array_free(&s->flags);
}

void process_free(struct oci_process *p)
{
	if (!p)
		return;
	free(p->user.additional_gids);
	free(p->user.username);
	spec_str_array_free(&p->args);
	spec_str_array_free(&p->env);
	free(p->cwd);
	capabilities_free(&p->capabilities);
	rlimits_free(p->rlimits, p->n_rlimits);
	free(p->apparmor_profile);
	free(p->selinux_label);
	free(p->io_priority.class_name);
	scheduler_free(&p->scheduler);
	free(p->exec_cpu_affinity.initial);
	free(p->exec_cpu_affinity.final);
	memset(p, 0, sizeof(*p));
}

/* ---- mounts, hooks ---------------------------------------------------- */

static void mounts_free(struct oci_mount *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].destination);
		free(m[i].type);
		free(m[i].source);
		spec_str_array_free(&m[i].options);
		free(m[i].uid_mappings);
		free(m[i].gid_mappings);
	}
	free(m);
}

static void hook_list_free(struct oci_hook_list *l)
{
	for (size_t i = 0; i < l->len; i++) {
		free(l->items[i].path);
		spec_str_array_free(&l->items[i].args);
		spec_str_array_free(&l->items[i].env);
	}
	free(l->items);
}

/* ---- linux.resources -------------------------------------------------- */

static void blkio_free(struct oci_blkio *b)
{
	free(b->weight_device);
	free(b->throttle_read_bps);
	free(b->throttle_write_bps);
	free(b->throttle_read_iops);
	free(b->throttle_write_iops);
}

void resources_free(struct oci_resources *r)
{
	for (size_t i = 0; i < r->n_devices; i++)
		free(r->devices[i].access);
	free(r->devices);
	free(r->cpu.cpus);
	free(r->cpu.mems);
	blkio_free(&r->block_io);
	for (size_t i = 0; i < r->n_hugepage_limits; i++)
		free(r->hugepage_limits[i].page_size);
	free(r->hugepage_limits);
	for (size_t i = 0; i < r->network.n_priorities; i++)
		free(r->network.priorities[i].name);
	free(r->network.priorities);
	for (size_t i = 0; i < r->n_rdma; i++)
		free(r->rdma[i].device);
	free(r->rdma);
	spec_str_map_free(&r->unified);
}

/* ---- linux.seccomp ---------------------------------------------------- */

static void seccomp_free(struct oci_seccomp *sc)
{
	free(sc->default_action);
	spec_str_array_free(&sc->architectures);
	spec_str_array_free(&sc->flags);
	free(sc->listener_path);
	free(sc->listener_metadata);
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		struct oci_seccomp_syscall *s = &sc->syscalls[i];

		spec_str_array_free(&s->names);
		free(s->action);
		for (size_t j = 0; j < s->n_args; j++)
			free(s->args[j].op);
		free(s->args);
	}
	free(sc->syscalls);
}

/* ---- linux ------------------------------------------------------------ */

static void linux_free(struct oci_linux *l)
{
	for (size_t i = 0; i < l->n_namespaces; i++)
		free(l->namespaces[i].path);
	free(l->namespaces);
	free(l->uid_mappings);
	free(l->gid_mappings);
	for (size_t i = 0; i < l->n_devices; i++)
		free(l->devices[i].path);
	free(l->devices);
	free(l->cgroups_path);
	resources_free(&l->resources);
	free(l->rootfs_propagation);
	seccomp_free(&l->seccomp);
	spec_str_map_free(&l->sysctl);
	spec_str_array_free(&l->masked_paths);
	spec_str_array_free(&l->readonly_paths);
	free(l->mount_label);
	free(l->personality.domain);
	spec_str_array_free(&l->personality.flags);
	free(l->memory_policy.mode);
	free(l->memory_policy.nodes);
	spec_str_array_free(&l->memory_policy.flags);
}

void spec_free(struct oci_spec *spec)
{
	if (!spec)
		return;
	free(spec->oci_version);
	process_free(&spec->process);
	free(spec->root.path);
	free(spec->hostname);
	free(spec->domainname);
	mounts_free(spec->mounts, spec->n_mounts);
	for (int k = 0; k < HOOK_KIND_MAX; k++)
		hook_list_free(&spec->hooks[k]);
	spec_str_map_free(&spec->annotations);
	linux_free(&spec->linux);
	memset(spec, 0, sizeof(*spec));
}
