/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec_validate() and spec_validate_process(): configs that must pass,
 * edge values on both sides of each limit, and structs built in code
 * (runtime/ builds some) that no JSON can produce.
 *
 * Case documents are written with single quotes, turned into double quotes
 * before parsing, and added to a minimal valid config.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/util.h"
#include "../../spec/spec.h"

struct vcase {
	const char *extra; /* members added to the base document */
	const char *err;   /* expected substring; NULL: must validate */
};

#define BASE "{'ociVersion':'1.0.0','root':{'path':'rootfs'}"
#define PROC "'process':{'cwd':'/','args':['sh']"
#define NS(...) "'namespaces':[" __VA_ARGS__ "]"
#define T(x) "{'type':'" x "'}"
#define MAP1 "[{'containerID':0,'hostID':1000,'size':1}]"
#define USERNS NS(T("user")) ",'uidMappings':" MAP1 ",'gidMappings':" MAP1

static char *to_json(const char *extra)
{
	char *s = extra ? xasprintf(BASE ",%s}", extra) : xasprintf(BASE "}");

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	return s;
}

static int run_case(const struct vcase *c, struct error *err)
{
	char *json = to_json(c->extra);
	struct oci_spec s;
	int rc = spec_parse(json, strlen(json), &s, err);

	if (rc == 0)
		rc = spec_validate(&s, err);
	spec_free(&s);
	free(json);
	return rc;
}

static void run_cases(const struct vcase *cases, size_t n)
{
	int failures = 0;

	for (size_t i = 0; i < n; i++) {
		struct error err = { 0 };
		int rc = run_case(&cases[i], &err);
		bool ok = cases[i].err ? rc < 0 && strstr(err.msg, cases[i].err)
				       : rc == 0;

		if (!ok) {
			print_error("case %zu: %s\n  expected: %s\n  got: %s\n",
				    i, cases[i].extra,
				    cases[i].err ? cases[i].err : "success",
				    rc ? err.msg : "success");
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

#define RUN(cases) run_cases((cases), sizeof(cases) / sizeof((cases)[0]))

/* ---- top level -------------------------------------------------------- */

static void test_versions(void **state)
{
	static const struct vcase cases[] = {
		{ "'ociVersion':'1.0.0'", NULL },
		{ "'ociVersion':'1.0.2-dev'", NULL },
		{ "'ociVersion':'1.2.1'", NULL },
		{ "'ociVersion':'1.3.0'", NULL },
		/* same major: forward compatible */
		{ "'ociVersion':'1.9.0'", NULL },
		{ "'ociVersion':'1.0.0-rc.1+build.5'", NULL },
		{ "'ociVersion':'1.0.0+20240101'", NULL },
		{ "'ociVersion':'2.0.0'", "unsupported version \"2.0.0\"" },
		{ "'ociVersion':'0.1.0'", "unsupported version" },
		{ "'ociVersion':'01.0.0'", "is not a SemVer version" },
		{ "'ociVersion':'1.0'", "is not a SemVer version" },
		{ "'ociVersion':'v1.0.0'", "is not a SemVer version" },
		{ "'ociVersion':'1.0.0-'", "is not a SemVer version" },
		{ "'ociVersion':'1.0.0-rc..1'", "is not a SemVer version" },
		{ "'ociVersion':'1.0.0 '", "is not a SemVer version" },
		{ "'ociVersion':'1.0.0.0'", "is not a SemVer version" },
		{ "'ociVersion':'1.-1.0'", "is not a SemVer version" },
		{ "'ociVersion':'99999999999999999999999.0.0'",
		  "is not a SemVer version" },
	};
	/* BASE sets ociVersion: these cases replace it, so drop BASE's */
	int failures = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *doc =
			xasprintf("{%s,'root':{'path':'r'}}", cases[i].extra);
		struct oci_spec s;
		struct error err = { 0 };
		int rc;

		for (char *p = doc; *p; p++)
			if (*p == '\'')
				*p = '"';
		rc = spec_parse(doc, strlen(doc), &s, &err);
		assert_int_equal(rc, 0);
		rc = spec_validate(&s, &err);
		if (cases[i].err ? !(rc < 0 && strstr(err.msg, cases[i].err))
				 : rc != 0) {
			print_error("%s: got %s\n", doc,
				    rc ? err.msg : "success");
			failures++;
		}
		spec_free(&s);
		free(doc);
	}
	assert_int_equal(failures, 0);
}

static void test_top_level(void **state)
{
	static const struct vcase cases[] = {
		{ NULL, NULL }, /* no process: valid (only start needs one) */
		{ "'hostname':'h','linux':{" NS(T("uts")) "}", NULL },
		{ "'hostname':'" /* 64 bytes */
		  "0123456789012345678901234567890123456789012345678901234567890123"
		  "','linux':{" NS(T("uts")) "}",
		  NULL },
		{ "'hostname':'h','linux':{" NS("{'type':'uts','path':"
						"'/proc/1/ns/uts'}") "}",
		  NULL },
		{ "'domainname':'d','linux':{" NS(T("pid")) "}",
		  "domainname: set without a uts namespace" },
		{ "'mounts':[{'destination':'/a'},{'destination':'/b/../c',"
		  "'type':'tmpfs'}]",
		  NULL },
		{ "'mounts':[{'destination':'/d','options':['bind','idmap']}],"
		  "'linux':{" USERNS "}",
		  NULL },
		{ "'mounts':[{'destination':'/d','options':['rbind','ridmap']}]",
		  "mounts[0].options: idmap without uidMappings" },
		{ "'mounts':[{'destination':'/d','gidMappings':" MAP1 "}]",
		  "mounts[0]: uidMappings and gidMappings must be set together" },
		{ "'mounts':[{'destination':'/d','uidMappings':[{'containerID':0,"
		  "'hostID':0,'size':0}],'gidMappings':" MAP1 "}]",
		  "mounts[0].uidMappings[0].size: must not be 0" },
		{ "'hooks':{'prestart':[{'path':'/x','timeout':1}],"
		  "'poststop':[{'path':'/y','timeout':9223372036854775807}]}",
		  NULL },
		{ "'hooks':{'startContainer':[{'path':'/x'},{'path':'y'}]}",
		  "hooks.startContainer[1].path: must be an absolute path" },
		{ "'annotations':{'a':'','b':'c'}", NULL },
	};
	RUN(cases);
}

/* ---- process ---------------------------------------------------------- */

static void test_process(void **state)
{
	static const struct vcase cases[] = {
		{ PROC "}", NULL },
		{ PROC ",'env':['A=','B==c','C=d=e']}", NULL },
		{ PROC ",'user':{'uid':0,'gid':0,'umask':511}}", NULL },
		{ PROC ",'user':{'uid':0,'gid':0,'umask':512}}",
		  "process.user.umask: 512 is not a umask" },
		{ PROC ",'oomScoreAdj':-1000}", NULL },
		{ PROC ",'oomScoreAdj':1000}", NULL },
		{ PROC ",'oomScoreAdj':-1001}", "process.oomScoreAdj: -1001" },
		{ PROC ",'apparmorProfile':'','selinuxLabel':''}", NULL },
		{ PROC ",'ioPriority':{'class':'IOPRIO_CLASS_IDLE'}}", NULL },
		{ PROC
		  ",'ioPriority':{'class':'IOPRIO_CLASS_RT','priority':7}}",
		  NULL },
		{ PROC
		  ",'ioPriority':{'class':'IOPRIO_CLASS_RT','priority':-1}}",
		  "process.ioPriority.priority: -1 is out of range" },
		{ PROC ",'rlimits':[{'type':'RLIMIT_AS','soft':0,'hard':0},"
		       "{'type':'RLIMIT_STACK','soft':8388608,'hard':"
		       "18446744073709551615}]}",
		  NULL },
		{ PROC ",'execCPUAffinity':{'initial':'0, 2-3 ,8191'}}", NULL },
		{ PROC ",'execCPUAffinity':{'initial':'8192'}}",
		  "execCPUAffinity.initial: \"8192\" is not a CPU list" },
		{ PROC ",'execCPUAffinity':{'final':'3-1'}}",
		  "is not a CPU list" },
		{ PROC ",'execCPUAffinity':{'final':'1,'}}",
		  "is not a CPU list" },
		{ PROC ",'execCPUAffinity':{'final':'-1'}}",
		  "is not a CPU list" },
		{ PROC ",'capabilities':{}}", NULL },
		{ PROC ",'capabilities':{'bounding':['CAP_SYS_ADMIN',"
		       "'CAP_BPF','CAP_PERFMON']}}",
		  NULL },
	};
	RUN(cases);
}

static void test_scheduler(void **state)
{
	static const struct vcase cases[] = {
		{ PROC ",'scheduler':{'policy':'SCHED_OTHER','nice':-20}}",
		  NULL },
		{ PROC ",'scheduler':{'policy':'SCHED_BATCH','nice':19}}",
		  NULL },
		{ PROC ",'scheduler':{'policy':'SCHED_IDLE'}}", NULL },
		{ PROC ",'scheduler':{'policy':'SCHED_FIFO','priority':1}}",
		  NULL },
		{ PROC ",'scheduler':{'policy':'SCHED_RR','priority':99,"
		       "'flags':['SCHED_FLAG_RESET_ON_FORK']}}",
		  NULL },
		{ PROC ",'scheduler':{'policy':'SCHED_RR','priority':100}}",
		  "SCHED_RR needs a priority in 1..99" },
		{ PROC ",'scheduler':{'policy':'SCHED_OTHER','priority':5}}",
		  "only SCHED_FIFO and SCHED_RR take a priority" },
		{ PROC ",'scheduler':{'policy':'SCHED_ISO'}}",
		  "SCHED_ISO is not implemented by Linux" },
		{ PROC ",'scheduler':{'policy':'SCHED_DEADLINE','runtime':1,"
		       "'deadline':2}}",
		  NULL },
		{ PROC ",'scheduler':{'policy':'SCHED_DEADLINE','runtime':1}}",
		  "SCHED_DEADLINE needs a deadline above 0" },
		{ PROC ",'scheduler':{'policy':'SCHED_DEADLINE','runtime':3,"
		       "'deadline':2}}",
		  "needs runtime <= deadline <= period" },
		{ PROC ",'scheduler':{'policy':'SCHED_DEADLINE','runtime':1,"
		       "'deadline':5,'period':4}}",
		  "needs runtime <= deadline <= period" },
	};
	RUN(cases);
}

/* ---- linux ------------------------------------------------------------ */

static void test_namespaces_and_mappings(void **state)
{
	static const struct vcase cases[] = {
		{ "'linux':{" NS(T("pid") "," T("network") "," T("mount") "," T(
			  "ipc") "," T("uts") "," T("cgroup") "," T("time")) "}",
		  NULL },
		{ "'linux':{" USERNS "}", NULL },
		/* joining a user namespace: mappings optional (CRI sends
		 * them with the path) */
		{ "'linux':{" NS(
			  "{'type':'user','path':'/proc/9/ns/user'}") "}",
		  NULL },
		{ "'linux':{" NS(
			  "{'type':'user','path':'/proc/9/ns/user'}") ",'uidMappings':" MAP1
								      ",'gidMappings':" MAP1
								      "}",
		  NULL },
		/* IDs are checked against the maps of a new namespace only */
		{ "'process':{'cwd':'/','args':['sh'],'user':{'uid':5,'gid':5}},"
		  "'linux':{" NS("{'type':'user','path':'/proc/9/ns/user'}") "}",
		  NULL },
		{ "'process':{'cwd':'/','args':['sh'],'user':{'uid':0,'gid':0,"
		  "'additionalGids':[0]}},'linux':{" USERNS "}",
		  NULL },
		{ "'linux':{" NS(T("user")) ",'uidMappings':" MAP1 "}",
		  "linux.gidMappings: required with a new user namespace" },
		{ "'linux':{" NS(T(
			  "user")) ",'uidMappings':[{'containerID':0,"
				   "'hostID':0,'size':4294967295},{'containerID':4294967295,"
				   "'hostID':4294967295,'size':1}],'gidMappings':" MAP1
				   "}",
		  NULL },
		{ "'linux':{" NS(T(
			  "user")) ",'uidMappings':[{'containerID':0,"
				   "'hostID':4294967295,'size':2}],'gidMappings':" MAP1
				   "}",
		  "linux.uidMappings[0]: range goes past ID 4294967295" },
		{ "'linux':{" NS(T(
			  "user")) ",'uidMappings':" MAP1 ",'gidMappings'"
				   ":[{'containerID':0,'hostID':1000,'size':1},{'containerID':1,"
				   "'hostID':1000,'size':1}]}",
		  "linux.gidMappings[1]: overlaps linux.gidMappings[0]" },
		{ "'linux':{" NS(T(
			  "time")) ",'timeOffsets':{'monotonic':{'secs':"
				   "-9223372036854775808,'nanosecs':999999999}}}",
		  NULL },
		{ "'linux':{" NS(
			  T("ipc") "," T("uts") "," T("pid") "," T("ipc")) "}",
		  "linux.namespaces[3].type: duplicate namespace type \"ipc\"" },
	};
	RUN(cases);
}

/* 340 extents is the kernel's limit */
static void test_mapping_count(void **state)
{
	for (int n = 340; n <= 341; n++) {
		size_t cap = 128 + (size_t)n * 64;
		char *extra = xmalloc(cap);
		int off = snprintf(
			extra, cap,
			"'linux':{" NS(T("user")) ",'gidMappings':" MAP1
						  ",'uidMappings':[");
		struct vcase c = { extra, n == 340 ? NULL : "more than 340" };

		for (int i = 0; i < n; i++)
			off += snprintf(
				extra + off, cap - off,
				"%s{'containerID':%d,'hostID':%d,'size':1}",
				i ? "," : "", i, 100000 + i);
		snprintf(extra + off, cap - off, "]}");
		run_cases(&c, 1);
		free(extra);
	}
}

static void test_sysctls(void **state)
{
	static const struct vcase cases[] = {
		{ "'linux':{" NS(T(
			  "network")) ",'sysctl':{'net.core.somaxconn':"
				      "'1024','net.ipv4.conf.eth0.forwarding':'1'}}",
		  NULL },
		{ "'linux':{" NS(
			  "{'type':'network','path':'/run/netns/a'}") ",'sysctl':{'net.ipv4.ip_forward':'1'}}",
		  NULL },
		{ "'linux':{" NS(T(
			  "ipc")) ",'sysctl':{'kernel.msgmax':'8192',"
				  "'kernel.msgmnb':'1','kernel.msgmni':'1','kernel.sem':"
				  "'250 32000 32 128','kernel.shmall':'1','kernel.shmmni':'1',"
				  "'kernel.shm_rmid_forced':'1','fs.mqueue.queues_max':'256'}}",
		  NULL },
		{ "'linux':{" NS(T("uts") "," T("network") "," T(
			  "ipc")) ",'sysctl':"
				  "{'kernel.domainname':'x'}}",
		  NULL },
		{ "'linux':{" NS(T("network")) ",'sysctl':"
				  "{'kernel.domainname':'x'}}",
		  "needs a \"uts\" namespace" },
		{ "'linux':{" NS(T("uts")) ",'sysctl':"
				  "{'kernel.hostname':'x'}}",
		  "refused: use the \"hostname\" field" },
		{ "'linux':{" NS(T("network")) ",'sysctl':{'.net.x':'1'}}",
		  "not a sysctl name" },
		{ "'linux':{" NS(T("network")) ",'sysctl':{'net.x.':'1'}}",
		  "not a sysctl name" },
		{ "'linux':{" NS(T("network")) ",'sysctl':{'net.a b':'1'}}",
		  "not a sysctl name" },
		{ "'linux':{" NS(T("network")) ",'sysctl':{'':'1'}}",
		  "not a sysctl name" },
		{ "'linux':{" NS(
			  T("network") "," T("ipc")) ",'sysctl':{'kernel."
						     "pid_max':'1'}}",
		  "not namespaced" },
		{ "'linux':{" NS(T("network") "," T(
			  "ipc")) ",'sysctl':{'user."
				  "max_user_namespaces':'0'}}",
		  "not namespaced" },
		{ "'linux':{" NS(
			  T("network") "," T("ipc")) ",'sysctl':{'netfilter"
						     ".x':'0'}}",
		  "not namespaced" },
	};
	RUN(cases);
}

static void test_devices_paths_misc(void **state)
{
	static const struct vcase cases[] = {
		{ "'linux':{'devices':[{'path':'/dev/p','type':'p'},{'path':"
		  "'/dev/u','type':'u','major':1,'minor':2,'fileMode':511}]}",
		  NULL },
		{ "'linux':{'rootfsPropagation':'shared'}", NULL },
		{ "'linux':{'rootfsPropagation':'slave'}", NULL },
		{ "'linux':{'rootfsPropagation':'private'}", NULL },
		{ "'linux':{'rootfsPropagation':'unbindable'}", NULL },
		{ "'linux':{'rootfsPropagation':'rshared'}", NULL },
		{ "'linux':{'rootfsPropagation':'rslave'}", NULL },
		{ "'linux':{'rootfsPropagation':'rprivate'}", NULL },
		{ "'linux':{'rootfsPropagation':'runbindable'}", NULL },
		{ "'linux':{'rootfsPropagation':'Private'}", "unknown value" },
		{ "'linux':{'cgroupsPath':'agentsbx/x'}", NULL },
		{ "'linux':{'cgroupsPath':'system.slice:agentsbx:abc'}", NULL },
		{ "'linux':{'cgroupsPath':'/a..b/..c/c..'}", NULL },
		{ "'linux':{'cgroupsPath':'..'}", "must not have \"..\"" },
		{ "'linux':{'cgroupsPath':'/a/b\\nc'}", "control characters" },
		{ "'linux':{'personality':{'domain':'LINUX'}}", NULL },
		{ "'linux':{'personality':{'domain':'LINUX32','flags':[]}}",
		  NULL },
		{ "'linux':{'intelRdt':{}}", "linux.intelRdt: not supported" },
		{ "'linux':{'intelRdt':null,'netDevices':null,'memoryPolicy':null}",
		  NULL },
		{ "'linux':{'mountLabel':''}", NULL },
	};
	RUN(cases);
}

static void test_resources(void **state)
{
	static const struct vcase cases[] = {
		{ "'linux':{'resources':{}}", NULL },
		{ "'linux':{'resources':{'devices':[{'allow':true,'major':-1,"
		  "'minor':-1,'access':''}]}}",
		  NULL },
		{ "'linux':{'resources':{'devices':[{'allow':true,'major':-2}]}}",
		  "negative major or minor" },
		{ "'linux':{'resources':{'memory':{'limit':-1,'swap':-1,"
		  "'swappiness':100}}}",
		  NULL },
		{ "'linux':{'resources':{'memory':{'limit':1048576,'swap':"
		  "1048576}}}",
		  NULL },
		{ "'linux':{'resources':{'memory':{'limit':0,'swap':1}}}",
		  NULL },
		{ "'linux':{'resources':{'cpu':{'quota':-1,'burst':100}}}",
		  NULL },
		{ "'linux':{'resources':{'cpu':{'quota':1000,'burst':1000}}}",
		  NULL },
		{ "'linux':{'resources':{'cpu':{'quota':-2}}}",
		  "cpu.quota: -2 is neither -1 nor a time" },
		{ "'linux':{'resources':{'cpu':{'realtimeRuntime':-2}}}",
		  "cpu.realtimeRuntime: -2" },
		{ "'linux':{'resources':{'cpu':{'cpus':'0-7:2/4','mems':'0,1'}}}",
		  NULL },
		{ "'linux':{'resources':{'cpu':{'mems':'all'}}}",
		  "cpu.mems: \"all\" is not a memory node list" },
		{ "'linux':{'resources':{'pids':{'limit':-1}}}", NULL },
		{ "'linux':{'resources':{'pids':{'limit':0}}}", NULL },
		{ "'linux':{'resources':{'blockIO':{'weightDevice':[{'major':8,"
		  "'minor':0,'leafWeight':10}],'throttleReadBpsDevice':[{'major':"
		  "-8,'minor':0,'rate':1}]}}}",
		  "blockIO.throttleReadBpsDevice[0]: negative major" },
		{ "'linux':{'resources':{'hugepageLimits':[{'pageSize':'64KB',"
		  "'limit':1},{'pageSize':'1GB','limit':1},{'pageSize':'32MB',"
		  "'limit':1}]}}",
		  NULL },
		{ "'linux':{'resources':{'hugepageLimits':[{'pageSize':'0MB',"
		  "'limit':1}]}}",
		  "is not a size like" },
		{ "'linux':{'resources':{'hugepageLimits':[{'pageSize':'2TB',"
		  "'limit':1}]}}",
		  "is not a size like" },
		{ "'linux':{'resources':{'hugepageLimits':[{'pageSize':'MB',"
		  "'limit':1}]}}",
		  "is not a size like" },
		{ "'linux':{'resources':{'network':{'priorities':[{'name':"
		  "'0123456789abcde','priority':1}]}}}",
		  NULL },
		{ "'linux':{'resources':{'network':{'priorities':[{'name':"
		  "'0123456789abcdef','priority':1}]}}}",
		  "is not an interface name" },
		{ "'linux':{'resources':{'network':{'priorities':[{'name':"
		  "'a/b','priority':1}]}}}",
		  "is not an interface name" },
		{ "'linux':{'resources':{'rdma':{'mlx 1':{'hcaObjects':1}}}}",
		  "is not a device name" },
		{ "'linux':{'resources':{'unified':{'cgroup.max.depth':'4',"
		  "'memory.max':'max','io.max':'8:0 rbps=1\\n8:16 rbps=2',"
		  "'hugetlb.1GB.max':'0'}}}",
		  NULL },
		{ "'linux':{'resources':{'unified':{'cgroup.subtree_control':"
		  "'+cpu'}}}",
		  "refused: the runtime manages it" },
		{ "'linux':{'resources':{'unified':{'cgroup.kill':'1'}}}",
		  "refused" },
		{ "'linux':{'resources':{'unified':{'.max':'1'}}}",
		  "not a cgroup file name" },
		{ "'linux':{'resources':{'unified':{'memory.':'1'}}}",
		  "not a cgroup file name" },
		{ "'linux':{'resources':{'unified':{'memory..max':'1'}}}",
		  "not a cgroup file name" },
		{ "'linux':{'resources':{'unified':{'memory.max\\n':'1'}}}",
		  "not a cgroup file name" },
	};
	RUN(cases);
}

static void test_seccomp(void **state)
{
	static const struct vcase cases[] = {
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_KILL'}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_KILL_PROCESS'}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_KILL_THREAD'}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_TRAP'}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_LOG'}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_TRACE',"
		  "'defaultErrnoRet':1}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ERRNO',"
		  "'defaultErrnoRet':4294967295}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
		  "'listenerPath':'/run/a.sock','syscalls':[{'names':['mount',"
		  "'umount2'],'action':'SCMP_ACT_NOTIFY'}]}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
		  "'architectures':['SCMP_ARCH_LOONGARCH64','SCMP_ARCH_RISCV64',"
		  "'SCMP_ARCH_SHEB','SCMP_ARCH_M68K']}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
		  "'flags':['SECCOMP_FILTER_FLAG_TSYNC','SECCOMP_FILTER_FLAG_SPEC"
		  "_ALLOW','SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV']}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
		  "'syscalls':[{'names':['kill'],'action':'SCMP_ACT_ERRNO',"
		  "'args':[{'index':5,'value':18446744073709551615,'valueTwo':0,"
		  "'op':'SCMP_CMP_GE'}]}]}}",
		  NULL },
		{ "'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
		  "'syscalls':[{'names':['kill',''],'action':'SCMP_ACT_ERRNO'}]}}",
		  "syscalls[0].names[1]: \"\" is not a syscall name" },
		{ "'linux':{'seccomp':{'defaultAction':'allow'}}",
		  "unknown action \"allow\"" },
	};
	RUN(cases);
}

/* ---- structs built in code -------------------------------------------- */

static void base_spec(struct oci_spec *s)
{
	const char *json =
		"{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
		"\"linux\":{\"namespaces\":[{\"type\":\"pid\"}],"
		"\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\","
		"\"major\":1,\"minor\":1}],\"resources\":{\"devices\":"
		"[{\"allow\":true}]}}}";
	struct error err = { 0 };

	assert_int_equal(spec_parse(json, strlen(json), s, &err), 0);
	assert_int_equal(spec_validate(s, &err), 0);
}

static void expect_invalid(const struct oci_spec *s, const char *msg)
{
	struct error err = { 0 };

	assert_int_equal(spec_validate(s, &err), -1);
	if (!strstr(err.msg, msg))
		print_error("expected \"%s\", got \"%s\"\n", msg, err.msg);
	assert_non_null(strstr(err.msg, msg));
}

static void test_constructed_structs(void **state)
{
	struct oci_spec s;

	base_spec(&s);
	s.linux.namespaces[0].type = NS_TYPE_MAX;
	expect_invalid(&s,
		       "linux.namespaces[0].type: unknown namespace type 8");
	s.linux.namespaces[0].type = NS_PID;
	s.linux.devices[0].type = 'x';
	expect_invalid(&s, "linux.devices[0].type: must be one of c, b, u, p");
	s.linux.devices[0].type = 'c';
	s.linux.resources.devices[0].type = 'p';
	expect_invalid(&s, "linux.resources.devices[0].type: must be one of");
	s.linux.resources.devices[0].type = 'a';
	free(s.linux.devices[0].path);
	s.linux.devices[0].path = NULL;
	expect_invalid(&s, "linux.devices[0].path: required field is missing");
	spec_free(&s);
}

static void test_validate_process_alone(void **state)
{
	struct oci_process p;
	struct error err = { 0 };
	const char *json =
		"{\"cwd\":\"/\",\"args\":[\"sh\"],\"apparmorProfile\":"
		"\"x\"}";

	memset(&p, 0, sizeof(p));
	assert_int_equal(spec_validate_process(&p, &err), -1);
	assert_string_equal(err.msg,
			    "process.json: cwd: required field is missing");

	assert_int_equal(spec_parse_process(json, strlen(json), &p, &err), 0);
	assert_int_equal(spec_validate_process(&p, &err), -1);
	assert_string_equal(err.msg,
			    "process.json: apparmorProfile: not "
			    "supported: this build has no AppArmor/SELinux "
			    "support");
	process_free(&p);

	json = "{\"cwd\":\"/\",\"args\":[]}";
	assert_int_equal(spec_parse_process(json, strlen(json), &p, &err), 0);
	assert_int_equal(spec_validate_process(&p, &err), -1);
	assert_string_equal(err.msg,
			    "process.json: args: must have at least one entry");
	process_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_top_level),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_scheduler),
		cmocka_unit_test(test_namespaces_and_mappings),
		cmocka_unit_test(test_mapping_count),
		cmocka_unit_test(test_sysctls),
		cmocka_unit_test(test_devices_paths_misc),
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_seccomp),
		cmocka_unit_test(test_constructed_structs),
		cmocka_unit_test(test_validate_process_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
