/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec_parse(), spec_parse_process(), spec_load_file(), spec_free(), the name
 * tables and spec_default_json().
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../spec/spec.h"

#define assert_ok(expr, err)                                                   \
	do {                                                                   \
		int rc_ = (expr);                                              \
		if (rc_ != 0)                                                  \
			print_error("unexpected error: %s\n", (err).msg);      \
		assert_int_equal(rc_, 0);                                      \
	} while (0)

static const char *data_dir(void)
{
	const char *d = getenv("SPEC_TESTDATA");
	return d ? d : "tests/unit/data";
}

static char *read_data(const char *rel, size_t *len)
{
	char *path = xasprintf("%s/%s", data_dir(), rel);
	struct error err = { 0 };
	char *buf = NULL;

	assert_ok(read_file_at(AT_FDCWD, path, 1 << 26, &buf, len, &err), err);
	free(path);
	return buf;
}

static int parse_str(const char *json, struct oci_spec *s, struct error *err)
{
	return spec_parse(json, strlen(json), s, err);
}

static bool is_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void expect_parse_error(const char *json, const char *msg)
{
	struct oci_spec s;
	struct error err = { 0 };

	assert_int_equal(parse_str(json, &s, &err), -1);
	if (!strstr(err.msg, msg))
		print_error("expected \"%s\"\n     got \"%s\"\n", msg, err.msg);
	assert_non_null(strstr(err.msg, msg));
	assert_true(is_zero(&s, sizeof(s)));
}

/* ---- a config with every field ---------------------------------------- */

static void check_full_process(const struct oci_process *p)
{
	assert_true(p->terminal);
	assert_true(p->console_size.set);
	assert_int_equal(p->console_size.height, 25);
	assert_int_equal(p->console_size.width, 80);
	assert_int_equal(p->user.uid, 1000);
	assert_int_equal(p->user.gid, 1001);
	assert_true(p->user.umask.set);
	assert_int_equal(p->user.umask.v, 18);
	assert_int_equal(p->user.n_additional_gids, 3);
	assert_int_equal(p->user.additional_gids[2], 65535);
	assert_string_equal(p->user.username, "agent");
	assert_int_equal(p->args.len, 3);
	assert_string_equal(p->args.items[2], "echo hello");
	assert_null(p->args.items[3]); /* NULL-terminated for execve() */
	assert_int_equal(p->env.len, 3);
	assert_string_equal(p->env.items[2], "EMPTY=");
	assert_null(p->env.items[3]);
	assert_string_equal(p->cwd, "/work");
	assert_true(p->has_capabilities);
	assert_int_equal(p->capabilities.bounding.len, 3);
	assert_int_equal(p->capabilities.inheritable.len, 0);
	assert_null(p->capabilities.inheritable.items);
	assert_string_equal(p->capabilities.permitted.items[1],
			    "CAP_CHECKPOINT_RESTORE");
	assert_string_equal(p->capabilities.ambient.items[0],
			    "CAP_NET_BIND_SERVICE");
	assert_int_equal(p->n_rlimits, 3);
	assert_string_equal(p->rlimits[0].type, "RLIMIT_NOFILE");
	assert_int_equal(p->rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(p->rlimits[0].soft, 1024);
	assert_int_equal(p->rlimits[0].hard, 4096);
	assert_int_equal(p->rlimits[1].resource, RLIMIT_CORE);
	assert_true(p->rlimits[1].soft == UINT64_MAX);
	assert_int_equal(p->rlimits[2].resource, RLIMIT_RTTIME);
	assert_true(p->no_new_privileges);
	assert_true(p->oom_score_adj.set);
	assert_int_equal(p->oom_score_adj.v, -500);
	assert_null(p->apparmor_profile);
	assert_null(p->selinux_label);
	assert_true(p->io_priority.set);
	assert_string_equal(p->io_priority.class_name, "IOPRIO_CLASS_BE");
	assert_int_equal(p->io_priority.class, IOPRIO_CLASS_BE);
	assert_int_equal(p->io_priority.priority, 4);
	assert_true(p->scheduler.set);
	assert_string_equal(p->scheduler.policy, "SCHED_DEADLINE");
	assert_int_equal(p->scheduler.nice.v, -3);
	assert_false(p->scheduler.priority.set);
	assert_int_equal(p->scheduler.flags.len, 2);
	assert_int_equal(p->scheduler.runtime.v, 10000000);
	assert_int_equal(p->scheduler.deadline.v, 20000000);
	assert_int_equal(p->scheduler.period.v, 30000000);
	assert_string_equal(p->exec_cpu_affinity.initial, "7");
	assert_string_equal(p->exec_cpu_affinity.final, "0-3,7");
}

static void check_full_top(const struct oci_spec *s)
{
	assert_string_equal(s->oci_version, "1.3.0");
	assert_true(s->has_process);
	assert_string_equal(s->root.path, "rootfs");
	assert_true(s->root.readonly);
	assert_string_equal(s->hostname, "sandbox");
	assert_string_equal(s->domainname, "agents.example");
	assert_int_equal(s->n_mounts, 2);
	assert_string_equal(s->mounts[0].destination, "/proc");
	assert_string_equal(s->mounts[0].type, "proc");
	assert_int_equal(s->mounts[0].options.len, 0);
	assert_string_equal(s->mounts[1].source, "/srv/data");
	assert_int_equal(s->mounts[1].options.len, 3);
	assert_int_equal(s->mounts[1].n_uid_mappings, 1);
	assert_int_equal(s->mounts[1].uid_mappings[0].host_id, 100000);
	assert_int_equal(s->mounts[1].gid_mappings[0].host_id, 200000);
	assert_int_equal(s->mounts[1].gid_mappings[0].size, 65536);
	for (int k = 0; k < HOOK_KIND_MAX; k++)
		assert_true(s->hooks[k].len >= 1);
	assert_string_equal(s->hooks[HOOK_PRESTART].items[0].path,
			    "/usr/bin/prestart");
	assert_int_equal(s->hooks[HOOK_PRESTART].items[0].timeout.v, 3);
	assert_string_equal(s->hooks[HOOK_PRESTART].items[0].env.items[0],
			    "K=V");
	assert_int_equal(s->hooks[HOOK_POSTSTART].len, 2);
	assert_false(s->hooks[HOOK_POSTSTART].items[0].timeout.set);
	assert_int_equal(s->hooks[HOOK_POSTSTART].items[1].timeout.v, 10);
	assert_string_equal(s->hooks[HOOK_START_CONTAINER].items[0].path,
			    "/usr/bin/start-container");
	assert_string_equal(str_map_get(&s->annotations, "com.example.a"), "1");
	assert_string_equal(str_map_get(&s->annotations, "com.example.empty"),
			    "");
	assert_null(str_map_get(&s->annotations, "com.example.none"));
}

static void check_full_linux(const struct oci_spec *s)
{
	const struct oci_linux *l = &s->linux;

	assert_true(s->has_linux);
	assert_int_equal(l->n_namespaces, 8);
	assert_int_equal(l->namespaces[1].type, NS_NETWORK);
	assert_string_equal(l->namespaces[1].path, "/var/run/netns/agent");
	assert_null(l->namespaces[0].path);
	assert_ptr_equal(spec_find_namespace(s, NS_TIME), &l->namespaces[7]);
	assert_int_equal(l->n_uid_mappings, 2);
	assert_int_equal(l->uid_mappings[1].container_id, 1000);
	assert_int_equal(l->n_gid_mappings, 1);
	assert_true(l->time_monotonic.set);
	assert_int_equal(l->time_monotonic.secs, -172800);
	assert_int_equal(l->time_monotonic.nanosecs, 500);
	assert_true(l->time_boottime.set);
	assert_int_equal(l->time_boottime.nanosecs, 0);
	assert_int_equal(l->n_devices, 2);
	assert_int_equal(l->devices[0].type, 'c');
	assert_int_equal(l->devices[0].major, 10);
	assert_int_equal(l->devices[0].minor, 229);
	assert_int_equal(l->devices[0].file_mode.v, 438);
	assert_true(l->devices[0].uid.set);
	assert_int_equal(l->devices[1].type, 'p');
	assert_false(l->devices[1].file_mode.set);
	assert_string_equal(l->cgroups_path, "/agentsbx/test");
	assert_string_equal(l->rootfs_propagation, "rslave");
	assert_int_equal(l->sysctl.len, 4);
	assert_string_equal(str_map_get(&l->sysctl, "net.ipv4.tcp_rmem"),
			    "4096\t87380\t6291456");
	assert_int_equal(l->masked_paths.len, 2);
	assert_string_equal(l->readonly_paths.items[0], "/proc/sys");
	assert_true(l->personality.set);
	assert_string_equal(l->personality.domain, "LINUX32");
	assert_false(l->memory_policy.set);
	assert_false(l->has_intel_rdt);
	assert_false(l->has_net_devices);
	assert_null(l->mount_label);
}

static void check_full_resources(const struct oci_resources *r)
{
	assert_true(r->present);
	assert_int_equal(r->n_devices, 3);
	assert_false(r->devices[0].allow);
	assert_int_equal(r->devices[0].type, 'a');
	assert_false(r->devices[0].major.set);
	assert_string_equal(r->devices[0].access, "rwm");
	assert_int_equal(r->devices[1].type, 'c');
	assert_int_equal(r->devices[1].minor.v, 229);
	assert_null(r->devices[2].access);
	assert_true(r->has_memory);
	assert_int_equal(r->memory.limit.v, 536870912);
	assert_int_equal(r->memory.swap.v, -1);
	/* Docker's -1 as uint64 means "unset" */
	assert_false(r->memory.swappiness.set);
	assert_true(r->memory.disable_oom_killer.set);
	assert_false(r->memory.disable_oom_killer.v);
	assert_true(r->memory.check_before_update.v);
	assert_true(r->has_cpu);
	assert_int_equal(r->cpu.shares.v, 1024);
	assert_int_equal(r->cpu.quota.v, 100000);
	assert_int_equal(r->cpu.burst.v, 50000);
	assert_string_equal(r->cpu.cpus, "0-3");
	assert_true(r->cpu.idle.set);
	assert_true(r->pids_limit.set);
	assert_int_equal(r->pids_limit.v, 128);
	assert_true(r->has_block_io);
	assert_int_equal(r->block_io.weight.v, 500);
	assert_int_equal(r->block_io.n_weight_device, 1);
	assert_false(r->block_io.weight_device[0].leaf_weight.set);
	assert_int_equal(r->block_io.n_throttle_write_iops, 2);
	assert_int_equal(r->block_io.throttle_write_iops[1].rate, 300);
	assert_int_equal(r->block_io.throttle_read_bps[0].rate, 1048576);
	assert_int_equal(r->n_hugepage_limits, 2);
	assert_string_equal(r->hugepage_limits[1].page_size, "1GB");
	assert_true(r->has_network);
	assert_int_equal(r->network.class_id.v, 1048577);
	assert_string_equal(r->network.priorities[0].name, "eth0");
	assert_int_equal(r->n_rdma, 1);
	assert_string_equal(r->rdma[0].device, "mlx5_1");
	assert_int_equal(r->rdma[0].hca_handles.v, 3);
	assert_int_equal(r->unified.len, 2);
	assert_non_null(strchr(str_map_get(&r->unified, "io.max"), '\n'));
}

static void check_full_seccomp(const struct oci_seccomp *sc)
{
	assert_true(sc->present);
	assert_string_equal(sc->default_action, "SCMP_ACT_ERRNO");
	assert_int_equal(sc->default_errno_ret.v, 38);
	assert_int_equal(sc->architectures.len, 3);
	assert_string_equal(sc->flags.items[0], "SECCOMP_FILTER_FLAG_LOG");
	assert_string_equal(sc->listener_path, "/run/seccomp-agent.sock");
	assert_string_equal(sc->listener_metadata, "meta");
	assert_int_equal(sc->n_syscalls, 4);
	assert_int_equal(sc->syscalls[0].names.len, 3);
	assert_string_equal(sc->syscalls[1].action, "SCMP_ACT_NOTIFY");
	assert_int_equal(sc->syscalls[2].n_args, 2);
	assert_int_equal(sc->syscalls[2].args[1].value, 4294967295u);
	assert_int_equal(sc->syscalls[2].args[1].value_two, 8);
	assert_string_equal(sc->syscalls[2].args[1].op, "SCMP_CMP_MASKED_EQ");
	assert_int_equal(sc->syscalls[2].args[0].value_two, 0);
	assert_true(sc->syscalls[3].errno_ret.set);
	assert_int_equal(sc->syscalls[3].errno_ret.v, 1);
}

static void test_full_config(void **state)
{
	struct oci_spec s;
	struct error err = { 0 };
	size_t len;
	char *buf = read_data("good/full.json", &len);

	assert_ok(spec_parse(buf, len, &s, &err), err);
	check_full_top(&s);
	check_full_process(&s.process);
	check_full_linux(&s);
	check_full_resources(&s.linux.resources);
	check_full_seccomp(&s.linux.seccomp);
	assert_ok(spec_validate(&s, &err), err);
	spec_free(&s);
	assert_true(is_zero(&s, sizeof(s)));
	spec_free(&s); /* idempotent */
	free(buf);
}

/* ---- parser behaviour ------------------------------------------------- */

static void test_minimal_and_absent(void **state)
{
	struct oci_spec s;
	struct error err = { 0 };

	assert_ok(
		parse_str(
			"{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"}}",
			&s, &err),
		err);
	assert_false(s.has_process);
	assert_false(s.has_linux);
	assert_false(s.linux.resources.present);
	assert_false(s.linux.seccomp.present);
	assert_null(s.hostname);
	assert_int_equal(s.n_mounts, 0);
	assert_null(spec_find_namespace(&s, NS_PID));
	spec_free(&s);
}

/* JSON null is "absent", as Go's encoding/json treats it; so is "". */
static void test_null_and_empty_are_absent(void **state)
{
	struct oci_spec s;
	struct error err = { 0 };

	assert_ok(
		parse_str(
			"{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\","
			"\"readonly\":null},\"process\":null,\"linux\":null,"
			"\"hostname\":\"\",\"mounts\":null,\"hooks\":{\"prestart"
			"\":null},\"annotations\":null}",
			&s, &err),
		err);
	assert_false(s.has_process);
	assert_false(s.has_linux);
	assert_false(s.root.readonly);
	assert_null(s.hostname);
	assert_int_equal(s.hooks[HOOK_PRESTART].len, 0);
	assert_ok(spec_validate(&s, &err), err);
	spec_free(&s);
}

static void test_unknown_fields_ignored(void **state)
{
	struct oci_spec s;
	struct error err = { 0 };

	assert_ok(
		parse_str(
			"{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\","
			"\"x\":1},\"future\":{\"a\":[1,{}]},\"windows\":7,"
			"\"solaris\":[],\"vm\":\"x\",\"zos\":null,\"freebsd\":"
			"{\"jail\":{\"vnet\":\"disable\"}},\"linux\":{\"newThing"
			"\":true,\"resources\":{\"oomScoreAdj\":5,\"newCtl\":{}}}}",
			&s, &err),
		err);
	assert_true(s.has_linux);
	assert_true(s.linux.resources.present);
	assert_ok(spec_validate(&s, &err), err);
	spec_free(&s);
}

/* A failure late in the document leaves nothing behind (ASan checks). */
static void test_failure_zeroes_output(void **state)
{
	size_t len;
	char *buf = read_data("good/full.json", &len);
	char *bad = strstr(buf, "\"SCMP_CMP_MASKED_EQ\"");
	struct oci_spec s;
	struct error err = { 0 };

	assert_non_null(bad);
	memcpy(bad, "12345678901234567890", 20);
	assert_int_equal(spec_parse(buf, len, &s, &err), -1);
	assert_string_equal(err.msg,
			    "config.json: linux.seccomp.syscalls[2]."
			    "args[1].op: expected a string, got number");
	assert_true(is_zero(&s, sizeof(s)));
	free(buf);
}

static void test_integer_ranges(void **state)
{
	struct oci_spec s;
	struct error err = { 0 };

	assert_ok(
		parse_str("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
			  "\"linux\":{\"resources\":{\"memory\":{\"limit\":"
			  "-9223372036854775808,\"swap\":9223372036854775807},"
			  "\"cpu\":{\"shares\":18446744073709551615}}}}",
			  &s, &err),
		err);
	assert_true(s.linux.resources.memory.limit.v == INT64_MIN);
	assert_true(s.linux.resources.memory.swap.v == INT64_MAX);
	assert_true(s.linux.resources.cpu.shares.v == UINT64_MAX);
	spec_free(&s);

	expect_parse_error("{\"linux\":{\"resources\":{\"memory\":{\"limit\":"
			   "-9223372036854775809}}}}",
			   "linux.resources.memory.limit: value out of range: "
			   "-9223372036854775809");
	expect_parse_error("{\"linux\":{\"resources\":{\"cpu\":{\"shares\":"
			   "18446744073709551616}}}}",
			   "linux.resources.cpu.shares: value out of range");
	expect_parse_error(
		"{\"linux\":{\"resources\":{\"cpu\":{\"shares\":-0}}}}",
		"linux.resources.cpu.shares: value out of range: -0");
	expect_parse_error(
		"{\"process\":{\"user\":{\"uid\":1e999999,\"gid\":0}}}",
		"process.user.uid: value out of range: 1e999999");
	expect_parse_error(
		"{\"process\":{\"oomScoreAdj\":2147483648}}",
		"process.oomScoreAdj: value out of range: 2147483648 "
		"(must be -2147483648..2147483647)");
	expect_parse_error("{\"linux\":{\"namespaces\":[{\"type\":\"user\"}],"
			   "\"uidMappings\":[{\"containerID\":0,\"hostID\":0,"
			   "\"size\":4294967296}]}}",
			   "linux.uidMappings[0].size: value out of range");
	expect_parse_error(
		"{\"linux\":{\"resources\":{\"blockIO\":{\"weightDevice"
		"\":[{\"major\":8,\"minor\":0,\"leafWeight\":65536}]}}}}",
		"linux.resources.blockIO.weightDevice[0].leafWeight: "
		"value out of range: 65536 (must be 0..65535)");
}

/* A megabyte of digits: the message shows the start only. */
static void test_huge_number_message_is_short(void **state)
{
	size_t n = 1 << 20;
	char *json = xmalloc(n + 100);
	struct oci_spec s;
	struct error err = { 0 };
	int off = sprintf(json, "{\"process\":{\"user\":{\"uid\":");

	memset(json + off, '7', n);
	strcpy(json + off + n, ",\"gid\":0}}}");
	assert_int_equal(parse_str(json, &s, &err), -1);
	assert_non_null(strstr(err.msg, "process.user.uid: value out of range: "
					"7777777777"));
	assert_true(strlen(err.msg) < 200);
	free(json);
}

/* Map keys are hostile: the path in messages is bounded and clean. */
static void test_hostile_key_in_path(void **state)
{
	size_t n = 100000;
	char *json = xmalloc(n + 200);
	struct oci_spec s;
	struct error err = { 0 };
	int off = sprintf(json, "{\"linux\":{\"resources\":{\"rdma\":{\"a\\nb");

	memset(json + off, 'k', n);
	strcpy(json + off + n, "\":{\"hcaObjects\":true}}}}}");
	assert_int_equal(parse_str(json, &s, &err), -1);
	assert_non_null(
		strstr(err.msg, "config.json: linux.resources.rdma.a?bkkk"));
	assert_non_null(strstr(err.msg,
			       "kkk....hcaObjects: expected an integer, "
			       "got boolean"));
	assert_null(strchr(err.msg, '\n'));
	assert_true(strlen(err.msg) < 300);
	free(json);
}

static void test_duplicate_keys_large_map(void **state)
{
	char json[64 * 40];
	int off = sprintf(json, "{\"annotations\":{");
	struct oci_spec s;
	struct error err = { 0 };

	for (int i = 0; i < 50; i++)
		off += sprintf(json + off, "\"k%d\":\"v\",", i);
	sprintf(json + off, "\"k17\":\"again\"}}");
	assert_int_equal(parse_str(json, &s, &err), -1);
	assert_string_equal(err.msg,
			    "config.json: annotations: duplicate key \"k17\"");
}

static void test_length_is_honoured(void **state)
{
	const char *json =
		"{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"}}"
		"GARBAGE\0MORE";
	struct oci_spec s;
	struct error err = { 0 };
	size_t len =
		strlen("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"}}");

	assert_ok(spec_parse(json, len, &s, &err), err);
	spec_free(&s);
	assert_int_equal(spec_parse(json, len + 7, &s, &err), -1);
	assert_non_null(strstr(err.msg, "trailing garbage"));
	assert_int_equal(spec_parse(NULL, 0, &s, &err), -1);
	assert_string_equal(err.msg, "config.json: empty file");
	assert_int_equal(spec_parse("", 0, &s, &err), -1);
	assert_int_equal(spec_parse("   ", 3, &s, &err), -1);
	assert_non_null(strstr(err.msg, "config.json: invalid JSON"));
}

/* ---- process.json ----------------------------------------------------- */

static void test_parse_process(void **state)
{
	const char *ok =
		"{\"cwd\":\"/\",\"args\":[\"ls\",\"-l\"],\"env\":[\"A=b\"],"
		"\"user\":{\"uid\":5,\"gid\":6},\"terminal\":true,"
		"\"capabilities\":{\"bounding\":[\"CAP_KILL\"]}}";
	struct oci_process p;
	struct error err = { 0 };

	assert_ok(spec_parse_process(ok, strlen(ok), &p, &err), err);
	assert_string_equal(p.args.items[1], "-l");
	assert_int_equal(p.user.uid, 5);
	assert_true(p.has_capabilities);
	assert_ok(spec_validate_process(&p, &err), err);
	process_free(&p);
	assert_true(is_zero(&p, sizeof(p)));
	process_free(&p);
	process_free(NULL);

	const char *max = "{\"user\":{\"uid\":4294967295,\"gid\":4294967295,"
			  "\"additionalGids\":[4294967295,0]}}";
	assert_ok(spec_parse_process(max, strlen(max), &p, &err), err);
	assert_int_equal(p.user.uid, UINT32_MAX);
	assert_int_equal(p.user.gid, UINT32_MAX);
	assert_int_equal(p.user.additional_gids[0], UINT32_MAX);
	process_free(&p);

	const char *bad =
		"{\"cwd\":\"/\",\"args\":[\"ls\"],\"user\":{\"uid\":-5,"
		"\"gid\":0}}";
	assert_int_equal(spec_parse_process(bad, strlen(bad), &p, &err), -1);
	assert_string_equal(err.msg, "process.json: user.uid: value out of "
				     "range: -5 (must be 0..4294967295)");
	assert_true(is_zero(&p, sizeof(p)));

	assert_int_equal(spec_parse_process("[]", 2, &p, &err), -1);
	assert_string_equal(err.msg,
			    "process.json: expected an object, got array");

	const char *rel = "{\"cwd\":\"tmp\",\"args\":[\"ls\"]}";
	assert_ok(spec_parse_process(rel, strlen(rel), &p, &err), err);
	assert_int_equal(spec_validate_process(&p, &err), -1);
	assert_string_equal(err.msg, "process.json: cwd: must be an absolute "
				     "path, got \"tmp\"");
	process_free(&p);
}

/* ---- spec_load_file() ------------------------------------------------- */

static void test_load_file(void **state)
{
	char dir[] = "/tmp/agentsbx-spec-XXXXXX";
	struct oci_spec s;
	struct error err = { 0 };
	char *path;

	assert_non_null(mkdtemp(dir));

	path = xasprintf("%s/good/full.json", data_dir());
	assert_ok(spec_load_file(path, &s, &err), err);
	assert_string_equal(s.hostname, "sandbox");
	spec_free(&s);
	free(path);

	path = xasprintf("%s/missing.json", dir);
	assert_int_equal(spec_load_file(path, &s, &err), -1);
	assert_non_null(strstr(err.msg, "No such file or directory"));
	assert_true(is_zero(&s, sizeof(s)));
	free(path);

	assert_int_equal(spec_load_file(dir, &s, &err), -1);
	assert_non_null(strstr(err.msg, "not a regular file"));

	/* a FIFO must not block the runtime */
	path = xasprintf("%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(spec_load_file(path, &s, &err), -1);
	assert_non_null(strstr(err.msg, "not a regular file"));
	unlink(path);
	free(path);

	path = xasprintf("%s/big.json", dir);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SPEC_MAX_FILE_SIZE + 1), 0);
	close(fd);
	assert_int_equal(spec_load_file(path, &s, &err), -1);
	assert_non_null(strstr(err.msg, "too large"));
	unlink(path);
	free(path);

	rmdir(dir);
}

/* ---- free ------------------------------------------------------------- */

static void test_free_zeroed_and_twice(void **state)
{
	struct oci_spec s;
	struct oci_process p;

	memset(&s, 0, sizeof(s));
	memset(&p, 0, sizeof(p));
	spec_free(&s);
	spec_free(&s);
	spec_free(NULL);
	process_free(&p);
	assert_true(is_zero(&s, sizeof(s)));
}

/* ---- name tables ------------------------------------------------------ */

static void test_namespace_and_hook_names(void **state)
{
	static const char *const ns[] = { "pid", "network", "mount",  "ipc",
					  "uts", "user",    "cgroup", "time" };
	static const char *const hooks[] = {
		"prestart",	  "createRuntime", "createContainer",
		"startContainer", "poststart",	   "poststop"
	};

	for (int t = 0; t < NS_TYPE_MAX; t++) {
		assert_string_equal(ns_type_name(t), ns[t]);
		assert_int_equal(ns_type_from_name(ns[t]), t);
	}
	assert_null(ns_type_name(NS_TYPE_MAX));
	assert_null(ns_type_name((enum ns_type) - 1));
	assert_int_equal(ns_type_from_name("net"), -1);
	assert_int_equal(ns_type_from_name("PID"), -1);
	assert_int_equal(ns_type_from_name(""), -1);
	assert_int_equal(ns_type_from_name(NULL), -1);
	for (int k = 0; k < HOOK_KIND_MAX; k++)
		assert_string_equal(hook_kind_name(k), hooks[k]);
	assert_null(hook_kind_name(HOOK_KIND_MAX));
}

static void test_process_names(void **state)
{
	assert_int_equal(rlimit_from_name("RLIMIT_CPU"), RLIMIT_CPU);
	assert_int_equal(rlimit_from_name("RLIMIT_NOFILE"), RLIMIT_NOFILE);
	assert_int_equal(rlimit_from_name("RLIMIT_RTTIME"), RLIMIT_RTTIME);
	assert_int_equal(rlimit_from_name("RLIMIT_MSGQUEUE"), RLIMIT_MSGQUEUE);
	assert_int_equal(rlimit_from_name("RLIMIT_NLIMITS"), -1);
	assert_int_equal(rlimit_from_name("nofile"), -1);
	assert_int_equal(rlimit_from_name(NULL), -1);
	assert_int_equal(ioprio_class_from_name("IOPRIO_CLASS_RT"),
			 IOPRIO_CLASS_RT);
	assert_int_equal(ioprio_class_from_name("IOPRIO_CLASS_IDLE"),
			 IOPRIO_CLASS_IDLE);
	assert_int_equal(ioprio_class_from_name("IOPRIO_CLASS_NONE"), -1);
	assert_int_equal(sched_policy_from_name("SCHED_DEADLINE"),
			 SCHED_DEADLINE);
	assert_int_equal(sched_policy_from_name("SCHED_OTHER"), SCHED_OTHER);
	assert_int_equal(sched_policy_from_name("SCHED_NORMAL"), -1);
	assert_int_equal(sched_flag_from_name("SCHED_FLAG_UTIL_CLAMP_MAX"),
			 0x40);
	assert_int_equal(sched_flag_from_name("SCHED_FLAG_ALL"), -1);
	assert_int_equal(personality_domain_from_name("LINUX"), PER_LINUX);
	assert_int_equal(personality_domain_from_name("LINUX32"), PER_LINUX32);
	assert_int_equal(personality_domain_from_name("linux"), -1);
}

static void test_capability_names(void **state)
{
	assert_int_equal(capability_from_name("CAP_CHOWN"), CAP_CHOWN);
	assert_int_equal(capability_from_name("CAP_KILL"), CAP_KILL);
	assert_int_equal(capability_from_name("CAP_SYS_ADMIN"), CAP_SYS_ADMIN);
	assert_int_equal(capability_from_name("CAP_CHECKPOINT_RESTORE"), 40);
	/* forms libcap accepts that a config must not use */
	assert_int_equal(capability_from_name("cap_kill"), -1);
	assert_int_equal(capability_from_name("Cap_Kill"), -1);
	assert_int_equal(capability_from_name("KILL"), -1);
	assert_int_equal(capability_from_name("5"), -1);
	assert_int_equal(capability_from_name("CAP_5"), -1);
	assert_int_equal(capability_from_name("CAP_"), -1);
	assert_int_equal(capability_from_name("CAP_KILL "), -1);
	assert_int_equal(capability_from_name("CAP_ALL"), -1);
	assert_int_equal(capability_from_name(""), -1);
	assert_int_equal(capability_from_name(NULL), -1);
	/* every capability libcap knows, by its upper-case name */
	for (int c = 0; c <= CAP_LAST_CAP; c++) {
		char *name = cap_to_name(c);
		char upper[64];
		size_t i;

		for (i = 0; name[i] && i < sizeof(upper) - 1; i++)
			upper[i] = (char)toupper((unsigned char)name[i]);
		upper[i] = '\0';
		assert_int_equal(capability_from_name(upper), c);
		cap_free(name);
	}
}

static void test_linux_names(void **state)
{
	unsigned long flags;
	uint32_t v;
	unsigned int f;

	assert_int_equal(rootfs_propagation_from_name("rslave", &flags), 0);
	assert_int_equal(flags, MS_SLAVE | MS_REC);
	assert_int_equal(rootfs_propagation_from_name("private", &flags), 0);
	assert_int_equal(flags, MS_PRIVATE);
	assert_int_equal(rootfs_propagation_from_name("runbindable", &flags),
			 0);
	assert_int_equal(flags, MS_UNBINDABLE | MS_REC);
	assert_int_equal(rootfs_propagation_from_name("recursive", &flags), -1);

	assert_int_equal(seccomp_action_from_name("SCMP_ACT_ALLOW", &v), 0);
	assert_int_equal(v, SCMP_ACT_ALLOW);
	assert_int_equal(seccomp_action_from_name("SCMP_ACT_ERRNO", &v), 0);
	assert_int_equal(v | 1, SCMP_ACT_ERRNO(1));
	assert_int_equal(seccomp_action_from_name("SCMP_ACT_TRACE", &v), 0);
	assert_int_equal(v | 7, SCMP_ACT_TRACE(7));
	assert_int_equal(seccomp_action_from_name("SCMP_ACT_KILL_PROCESS", &v),
			 0);
	assert_int_equal(v, SCMP_ACT_KILL_PROCESS);
	assert_int_equal(seccomp_action_from_name("SCMP_ACT_NOTIFY", &v), 0);
	assert_int_equal(v, SCMP_ACT_NOTIFY);
	assert_int_equal(seccomp_action_from_name("ALLOW", &v), -1);
	assert_true(seccomp_action_takes_errno("SCMP_ACT_ERRNO"));
	assert_true(seccomp_action_takes_errno("SCMP_ACT_TRACE"));
	assert_false(seccomp_action_takes_errno("SCMP_ACT_KILL"));
	assert_false(seccomp_action_takes_errno(NULL));

	assert_int_equal(seccomp_op_from_name("SCMP_CMP_MASKED_EQ"),
			 SCMP_CMP_MASKED_EQ);
	assert_int_equal(seccomp_op_from_name("SCMP_CMP_NE"), SCMP_CMP_NE);
	assert_int_equal(seccomp_op_from_name("=="), -1);

	assert_int_equal(seccomp_arch_from_name("SCMP_ARCH_X86_64", &v), 0);
	assert_int_equal(v, SCMP_ARCH_X86_64);
	assert_int_equal(seccomp_arch_from_name("SCMP_ARCH_AARCH64", &v), 0);
	assert_int_equal(v, SCMP_ARCH_AARCH64);
	/* listed by the spec: known, even if this libseccomp lacks it */
	assert_int_equal(seccomp_arch_from_name("SCMP_ARCH_LOONGARCH64", &v),
			 0);
	assert_int_equal(seccomp_arch_from_name("SCMP_ARCH_NATIVE", &v), -1);

	assert_int_equal(
		seccomp_flag_from_name("SECCOMP_FILTER_FLAG_TSYNC", &f), 0);
	assert_int_equal(f, 1);
	assert_int_equal(seccomp_flag_from_name(
				 "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", &f),
			 0);
	assert_int_equal(f, 1u << 5);
	assert_int_equal(
		seccomp_flag_from_name("SECCOMP_FILTER_FLAG_NEW_LISTENER", &f),
		-1);
}

/* ---- spec_default_json() ---------------------------------------------- */

static bool has_string(const struct str_array *a, const char *s)
{
	for (size_t i = 0; i < a->len; i++)
		if (strcmp(a->items[i], s) == 0)
			return true;
	return false;
}

static void parse_default(bool rootless, struct oci_spec *s)
{
	char *json = spec_default_json(rootless, 1000, 1000);
	char *again = spec_default_json(rootless, 1000, 1000);
	struct error err = { 0 };

	assert_string_equal(json, again); /* deterministic */
	assert_int_equal(json[strlen(json) - 1], '\n');
	assert_non_null(strstr(json, "\n\t\"ociVersion\": \"" OCI_VERSION_MAX));
	assert_ok(parse_str(json, s, &err), err);
	assert_ok(spec_validate(s, &err), err);
	free(json);
	free(again);
}

static void check_default_common(const struct oci_spec *s)
{
	const struct oci_process *p = &s->process;

	assert_true(p->terminal);
	assert_int_equal(p->args.len, 1);
	assert_string_equal(p->args.items[0], "sh");
	assert_string_equal(p->cwd, "/");
	assert_true(has_string(&p->env, "TERM=xterm"));
	assert_true(p->no_new_privileges);
	assert_int_equal(p->capabilities.bounding.len, 3);
	assert_true(has_string(&p->capabilities.effective, "CAP_KILL"));
	assert_true(
		has_string(&p->capabilities.permitted, "CAP_NET_BIND_SERVICE"));
	assert_int_equal(p->capabilities.ambient.len, 0);
	assert_int_equal(p->n_rlimits, 1);
	assert_int_equal(p->rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(p->rlimits[0].hard, 1024);
	assert_string_equal(s->root.path, "rootfs");
	assert_true(s->root.readonly);
	assert_string_equal(s->hostname, "agentsbx");
	assert_int_equal(s->n_mounts, 7);
	assert_string_equal(s->mounts[0].destination, "/proc");
	assert_string_equal(s->mounts[6].destination, "/sys/fs/cgroup");
	assert_true(has_string(&s->mounts[5].options, "ro"));
	for (int t = 0; t < NS_TYPE_MAX; t++)
		if (t != NS_USER && t != NS_TIME)
			assert_non_null(spec_find_namespace(s, t));
	assert_null(spec_find_namespace(s, NS_TIME));
	assert_true(has_string(&s->linux.masked_paths, "/proc/kcore"));
	assert_true(has_string(&s->linux.readonly_paths, "/proc/sys"));
}

static void test_default_json(void **state)
{
	struct oci_spec s;

	parse_default(false, &s);
	check_default_common(&s);
	assert_null(spec_find_namespace(&s, NS_USER));
	assert_int_equal(s.linux.n_uid_mappings, 0);
	assert_true(has_string(&s.mounts[2].options, "gid=5"));
	assert_true(s.linux.resources.present);
	assert_int_equal(s.linux.resources.n_devices, 1);
	assert_false(s.linux.resources.devices[0].allow);
	assert_string_equal(s.linux.resources.devices[0].access, "rwm");
	spec_free(&s);

	parse_default(true, &s);
	check_default_common(&s);
	assert_non_null(spec_find_namespace(&s, NS_USER));
	assert_int_equal(s.linux.n_uid_mappings, 1);
	assert_int_equal(s.linux.uid_mappings[0].container_id, 0);
	assert_int_equal(s.linux.uid_mappings[0].host_id, 1000);
	assert_int_equal(s.linux.uid_mappings[0].size, 1);
	assert_int_equal(s.linux.gid_mappings[0].host_id, 1000);
	assert_false(has_string(&s.mounts[2].options, "gid=5"));
	assert_false(s.linux.resources.present);
	spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_config),
		cmocka_unit_test(test_minimal_and_absent),
		cmocka_unit_test(test_null_and_empty_are_absent),
		cmocka_unit_test(test_unknown_fields_ignored),
		cmocka_unit_test(test_failure_zeroes_output),
		cmocka_unit_test(test_integer_ranges),
		cmocka_unit_test(test_huge_number_message_is_short),
		cmocka_unit_test(test_hostile_key_in_path),
		cmocka_unit_test(test_duplicate_keys_large_map),
		cmocka_unit_test(test_length_is_honoured),
		cmocka_unit_test(test_parse_process),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_free_zeroed_and_twice),
		cmocka_unit_test(test_namespace_and_hook_names),
		cmocka_unit_test(test_process_names),
		cmocka_unit_test(test_capability_names),
		cmocka_unit_test(test_linux_names),
		cmocka_unit_test(test_default_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
