/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec/policy/policy_engine.c: the bind prefixes derived from where the
 * engine put the bundle (containerd with any --root/--state, k3s, dockerd
 * with any --data-root), and nothing derived from a bundle elsewhere or
 * from a `work` link naming another task.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../spec/policy/policy.h"

#define ID "c0ffee"
#define SID "5a4d"

static void freev(struct str_array *a)
{
	for (size_t i = 0; i < a->len; i++)
		free(a->items[i]);
	free(a->items);
	memset(a, 0, sizeof(*a));
}

static void test_containerd_any_root(void **state)
{
	struct str_array a = { 0 };
	(void)state;
	policy_engine_bind_prefixes("/tmp/x/state/io.containerd.runtime.v2.task/k8s.io/" ID,
				    "/tmp/x/root/io.containerd.runtime.v2.task/k8s.io/" ID, ID, SID, &a);
	assert_int_equal(a.len, 4);
	assert_string_equal(a.items[0], "/tmp/x/state/io.containerd.grpc.v1.cri/sandboxes/" SID);
	assert_string_equal(a.items[1], "/tmp/x/state/io.containerd.grpc.v1.cri/containers/" ID);
	assert_string_equal(a.items[2], "/tmp/x/root/io.containerd.grpc.v1.cri/sandboxes/" SID);
	assert_string_equal(a.items[3], "/tmp/x/root/io.containerd.grpc.v1.cri/containers/" ID);
	assert_true(policy_bind_allowed(&a, "/tmp/x/state/io.containerd.grpc.v1.cri/sandboxes/" SID "/shm"));
	assert_false(policy_bind_allowed(&a, "/tmp/x/state/io.containerd.grpc.v1.cri/sandboxes/other/shm"));
	assert_false(policy_bind_allowed(&a, "/tmp/x/state/io.containerd.grpc.v1.cri/sandboxes/" SID "/../other"));
	assert_false(policy_bind_allowed(&a, "/tmp/x/root"));
	assert_false(policy_bind_allowed(&a, "/tmp/x/state/io.containerd.runtime.v2.task/k8s.io/" ID));
	freev(&a);
}

static void test_k3s(void **state)
{
	struct str_array a = { 0 };
	(void)state;
	policy_engine_bind_prefixes("/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/" ID,
				    "/var/lib/rancher/k3s/agent/containerd/io.containerd.runtime.v2.task/k8s.io/" ID,
				    ID, NULL, &a);
	assert_int_equal(a.len, 4);
	/* no sandbox id: the container's own id names its sandbox dir */
	assert_string_equal(a.items[2], "/var/lib/rancher/k3s/agent/containerd/io.containerd.grpc.v1.cri/sandboxes/" ID);
	freev(&a);
}

static void test_dockerd_data_root(void **state)
{
	struct str_array a = { 0 };
	(void)state;
	policy_engine_bind_prefixes("/srv/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/" ID,
				    "/srv/data/containerd/daemon/io.containerd.runtime.v2.task/moby/" ID,
				    ID, NULL, &a);
	assert_int_equal(a.len, 5);
	assert_string_equal(a.items[4], "/srv/data/containers/" ID);
	freev(&a);
}

static void test_nothing_derived(void **state)
{
	struct str_array a = { 0 };
	(void)state;
	/* a bundle anywhere else, "/" included: nothing */
	policy_engine_bind_prefixes("/home/u/bundle", NULL, ID, SID, &a);
	assert_int_equal(a.len, 0);
	policy_engine_bind_prefixes("/", "/", ID, SID, &a);
	assert_int_equal(a.len, 0);
	/* the last component is not the id */
	policy_engine_bind_prefixes("/s/io.containerd.runtime.v2.task/ns/other", NULL, ID, SID, &a);
	assert_int_equal(a.len, 0);
	/* a work link naming another task, another namespace, or "/" */
	policy_engine_bind_prefixes("/s/io.containerd.runtime.v2.task/ns/" ID,
				    "/r/io.containerd.runtime.v2.task/ns/other", ID, SID, &a);
	assert_int_equal(a.len, 2);
	freev(&a);
	policy_engine_bind_prefixes("/s/io.containerd.runtime.v2.task/ns/" ID,
				    "/r/io.containerd.runtime.v2.task/other/" ID, ID, SID, &a);
	assert_int_equal(a.len, 2);
	freev(&a);
	policy_engine_bind_prefixes("/s/io.containerd.runtime.v2.task/ns/" ID, "/", ID, SID, &a);
	assert_int_equal(a.len, 2);
	freev(&a);
	/* ids that are not one plain name: nothing, or the own id */
	policy_engine_bind_prefixes("/s/io.containerd.runtime.v2.task/ns/..", NULL, "..", NULL, &a);
	assert_int_equal(a.len, 0);
	policy_engine_bind_prefixes("/s/io.containerd.runtime.v2.task/ns/" ID, NULL, ID, "../x", &a);
	assert_int_equal(a.len, 2);
	assert_string_equal(a.items[0], "/s/io.containerd.grpc.v1.cri/sandboxes/" ID);
	freev(&a);
	/* a bundle path with ".." is cleaned first */
	policy_engine_bind_prefixes("/s/io.containerd.runtime.v2.task/ns/x/../" ID, NULL, ID, NULL, &a);
	assert_int_equal(a.len, 2);
	assert_string_equal(a.items[0], "/s/io.containerd.grpc.v1.cri/sandboxes/" ID);
	freev(&a);
}

#define DTASK "/containerd/daemon/io.containerd.runtime.v2.task/moby/"

static void test_volumes_and_layers_of_this_engine(void **state)
{
	struct str_array v = { 0 }, l = { 0 };
	struct policy p;
	(void)state;
	policy_engine_volume_dirs("/run/docker" DTASK ID, "/srv/d" DTASK ID, ID, &v);
	assert_int_equal(v.len, 1);
	assert_string_equal(v.items[0], "/srv/d/volumes");
	assert_true(policy_volume_allowed(&v, "/srv/d/volumes/data/_data"));
	assert_true(policy_volume_allowed(&v, "/srv/d/volumes/data/_data/sub"));
	assert_false(policy_volume_allowed(&v, "/srv/d/volumes"));
	assert_false(policy_volume_allowed(&v, "/srv/d/volumes/data"));
	assert_false(policy_volume_allowed(&v, "/srv/d/volumes/data/_database"));
	assert_false(policy_volume_allowed(&v, "/srv/d/volumes//_data"));
	/* podman: its graph root, from the bundle */
	policy_engine_volume_dirs("/g/overlay-containers/" ID "/userdata", NULL, ID, &v);
	assert_string_equal(v.items[1], "/g/volumes");
	/* a bundle elsewhere, or a work link of another id: nothing */
	policy_engine_volume_dirs("/home/u/b", "/srv/d" DTASK ID, ID, &v);
	policy_engine_volume_dirs("/run/docker" DTASK ID, "/srv/d" DTASK "other", ID, &v);
	assert_int_equal(v.len, 2);
	policy_engine_layer_dirs("/run/docker" DTASK ID, "/srv/d" DTASK ID, ID, &l);
	policy_default(&p);
	freev(&p.engine_layer_dirs);
	p.engine_layer_dirs = l;
	assert_true(policy_rootfs_allowed(&p, "/b", "/srv/d/overlay2/0a1b/merged"));
	assert_false(policy_rootfs_allowed(&p, "/b", "/srv/d/overlay2"));
	assert_false(policy_rootfs_allowed(&p, "/b", "/srv/d/overlay2/0a1b"));
	assert_false(policy_rootfs_allowed(&p, "/b", "/srv/d/overlay2/../x/merged"));
	assert_false(policy_rootfs_allowed(&p, "/b", "/home/user"));
	assert_true(policy_rootfs_allowed(&p, "/b", "/b/rootfs"));
	assert_true(policy_rootfs_allowed(&p, "/b", "/b"));
	assert_false(policy_rootfs_allowed(&p, "/b", "/bb"));
	policy_free(&p);
	freev(&v);
}

static void test_pod_dir_only_for_a_task(void **state)
{
	char *d;
	(void)state;
	d = policy_engine_pod_dir("/s/io.containerd.runtime.v2.task/k8s.io/" ID, ID, "u-1");
	assert_string_equal(d, "/var/lib/kubelet/pods/u-1");
	free(d);
	assert_null(policy_engine_pod_dir("/home/u/b", ID, "u-1"));
	assert_null(policy_engine_pod_dir("/s/io.containerd.runtime.v2.task/k8s.io/" ID, ID, "../x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_containerd_any_root),
		cmocka_unit_test(test_volumes_and_layers_of_this_engine),
		cmocka_unit_test(test_pod_dir_only_for_a_task),
		cmocka_unit_test(test_k3s),
		cmocka_unit_test(test_dockerd_data_root),
		cmocka_unit_test(test_nothing_derived),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
