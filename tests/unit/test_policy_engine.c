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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_containerd_any_root),
		cmocka_unit_test(test_k3s),
		cmocka_unit_test(test_dockerd_data_root),
		cmocka_unit_test(test_nothing_derived),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
