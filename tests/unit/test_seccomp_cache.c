/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/seccomp/cache.c: SHA-256, the key, the on-disk entries, and what
 * the cache buys on a container start.
 */
#include "test_seccomp_helpers.h"

#include <linux/seccomp.h>
#include <sys/mount.h>

struct fixture {
	char *tmp;   /* private temp dir */
	char *cache; /* tmp/seccomp-cache */
	struct oci_seccomp docker;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));

	f->tmp = tsc_mkdtemp();
	f->cache = xasprintf("%s/seccomp-cache", f->tmp);
	tsc_load_data("docker-default.json", &f->docker);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	seccomp_cache_test_set_lib_version(NULL);
	tsc_rm_rf(f->tmp);
	tsc_free(&f->docker);
	free(f->cache);
	free(f->tmp);
	free(f);
	return 0;
}

static void prepare(const struct oci_seccomp *sc, const char *cache,
		    struct seccomp_prog *prog)
{
	struct error err;

	error_clear(&err);
	if (seccomp_prepare(sc, cache, prog, &err) < 0)
		fail_msg("seccomp_prepare: %s", err.msg);
}

static char *entry_path(const struct fixture *f, const struct seccomp_prog *p)
{
	return xasprintf("%s/%s", f->cache, p->key);
}

static void assert_same_prog(const struct seccomp_prog *a,
			     const struct seccomp_prog *b)
{
	assert_int_equal(a->len, b->len);
	assert_memory_equal(a->insns, b->insns, a->len * sizeof(*a->insns));
	assert_int_equal(a->flags, b->flags);
	assert_string_equal(a->key, b->key);
}

/* ---- SHA-256 ------------------------------------------------------------- */

static void hex_of(const void *data, size_t len, char out[65])
{
	struct sha256_ctx c;
	uint8_t d[32];

	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, d);
	seccomp_key_hex(d, out);
}

static void test_sha256_vectors(void **state)
{
	static const char abc448[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	struct sha256_ctx c;
	char hex[65];
	uint8_t d[32];
	char chunk[997];

	hex_of("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb924"
				 "27ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223"
				 "b00361a396177a9cb410ff61f20015ad");
	hex_of(abc448, strlen(abc448), hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039"
				 "a33ce45964ff2167f6ecedd419db06c1");
	/* a million 'a', fed in odd-sized pieces across block boundaries */
	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&c);
	for (size_t left = 1000000; left;) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
		sha256_update(&c, chunk, n);
		left -= n;
	}
	sha256_final(&c, d);
	seccomp_key_hex(d, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
				 "f1809a48a497200e046d39ccc7112cd0");
}

/* ---- the key ------------------------------------------------------------- */

static void key_of(const char *json, char hex[65])
{
	struct oci_seccomp sc;
	uint8_t key[32];

	tsc_parse(json, &sc);
	seccomp_cache_key(&sc, key);
	seccomp_key_hex(key, hex);
	tsc_free(&sc);
}

#define PROFILE(defret, arch, errno_ret, value, extra)                         \
	"{\"defaultAction\": \"SCMP_ACT_ERRNO\"" defret ","                    \
	" \"architectures\": [" arch "]" extra ","                             \
	" \"syscalls\": [{\"names\": [\"read\", \"write\"],"                   \
	"  \"action\": \"SCMP_ACT_ALLOW\"},"                                   \
	" {\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ERRNO\""            \
	errno_ret "},"                                                         \
	" {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\","      \
	"  \"args\": [{\"index\": 0, \"value\": " value ","                    \
	"  \"op\": \"SCMP_CMP_EQ\"}]}]}"

#define X86 "\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\""
#define X86R "\"SCMP_ARCH_X86\", \"SCMP_ARCH_X86_64\""

static void test_key(void **state)
{
	char base[65], other[65];

	key_of(PROFILE("", X86, "", "8", ""), base);
	/* the same struct from differently spaced JSON: same key */
	key_of("  " PROFILE("", X86, "", "8", "") "\n", other);
	assert_string_equal(base, other);
	/* not in the BPF: same key */
	key_of(PROFILE("", X86, "", "8",
		       ", \"listenerPath\": \"/run/a.sock\","
		       " \"listenerMetadata\": \"container-42\","
		       " \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"]"),
	       other);
	assert_string_equal(base, other);
	/* everything else changes it */
	key_of(PROFILE(", \"defaultErrnoRet\": 1", X86, "", "8", ""), other);
	assert_string_not_equal(base, other);
	key_of(PROFILE("", X86R, "", "8", ""), other);
	assert_string_not_equal(base, other);
	key_of(PROFILE("", X86, ", \"errnoRet\": 1", "8", ""), other);
	assert_string_not_equal(base, other);
	key_of(PROFILE("", X86, "", "9", ""), other);
	assert_string_not_equal(base, other);
	/* the environment: libseccomp's version */
	seccomp_cache_test_set_lib_version("9.9.9");
	key_of(PROFILE("", X86, "", "8", ""), other);
	seccomp_cache_test_set_lib_version(NULL);
	assert_string_not_equal(base, other);
	key_of(PROFILE("", X86, "", "8", ""), other);
	assert_string_equal(base, other);
}

/* ---- entries ------------------------------------------------------------- */

static void test_hit(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog a, b;
	unsigned before = seccomp_compile_count();
	struct stat st;
	char *path;

	prepare(&f->docker, f->cache, &a);
	assert_int_equal(seccomp_compile_count(), before + 1);
	assert_false(a.from_cache);
	assert_int_equal(stat(f->cache, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	path = entry_path(f, &a);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());

	prepare(&f->docker, f->cache, &b);
	assert_int_equal(seccomp_compile_count(), before + 1); /* no compile */
	assert_true(b.from_cache);
	assert_same_prog(&a, &b);
	seccomp_prog_free(&a);
	seccomp_prog_free(&b);
	free(path);
}

/* Flags are recomputed on a hit, not taken from the entry. */
static void test_hit_flags_not_cached(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog a, b;
	struct oci_seccomp sc;

	tsc_parse("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
		  " {\"names\": [\"getuid\"], \"action\": \"SCMP_ACT_ERRNO\"}]}",
		  &sc);
	prepare(&sc, f->cache, &a);
	tsc_free(&sc);
	tsc_parse("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
		  " \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"], \"syscalls\": ["
		  " {\"names\": [\"getuid\"], \"action\": \"SCMP_ACT_ERRNO\"}]}",
		  &sc);
	prepare(&sc, f->cache, &b);
	tsc_free(&sc);
	assert_true(b.from_cache);
	assert_int_equal(a.flags, 0);
	assert_int_equal(b.flags, SECCOMP_FILTER_FLAG_LOG);
	seccomp_prog_free(&a);
	seccomp_prog_free(&b);
}

static void test_other_lib_version_not_trusted(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog a, b, c;
	unsigned before = seccomp_compile_count();

	prepare(&f->docker, f->cache, &a);
	seccomp_cache_test_set_lib_version("2.5.3");
	prepare(&f->docker, f->cache, &b);
	seccomp_cache_test_set_lib_version(NULL);
	assert_int_equal(seccomp_compile_count(), before + 2);
	assert_false(b.from_cache);
	assert_string_not_equal(a.key, b.key);
	prepare(&f->docker, f->cache, &c); /* back to the real version: hit */
	assert_true(c.from_cache);
	assert_int_equal(seccomp_compile_count(), before + 2);
	seccomp_prog_free(&a);
	seccomp_prog_free(&b);
	seccomp_prog_free(&c);
}

/* Overwrite len bytes of a cache entry at off (as root, mode 0600). */
static void poke(const char *path, off_t off, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

static void expect_recompile(struct fixture *f, const struct seccomp_prog *good)
{
	unsigned before = seccomp_compile_count();
	struct seccomp_prog p;

	prepare(&f->docker, f->cache, &p);
	assert_false(p.from_cache);
	assert_int_equal(seccomp_compile_count(), before + 1);
	assert_same_prog(good, &p);
	seccomp_prog_free(&p);
	/* rewritten: the next start hits again */
	prepare(&f->docker, f->cache, &p);
	assert_true(p.from_cache);
	assert_same_prog(good, &p);
	seccomp_prog_free(&p);
}

/* Header layout (cache.c): magic 8, format 4, count 4, key 32,
 * digest 32, then the instructions. */
#define OFF_KEY 16
#define OFF_INSNS 80

static void test_header_key_mismatch(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog good;
	char *path;
	uint8_t x = 0x5a;

	prepare(&f->docker, f->cache, &good);
	path = entry_path(f, &good);
	poke(path, OFF_KEY + 3, &x, 1);
	expect_recompile(f, &good);
	free(path);
	seccomp_prog_free(&good);
}

/* Another profile's valid entry planted under this profile's name. */
static void test_planted_entry(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog good, other;
	struct oci_seccomp sc;
	char *src, *dst, *cmd;

	prepare(&f->docker, f->cache, &good);
	tsc_parse("{\"defaultAction\": \"SCMP_ACT_ALLOW\"}", &sc);
	prepare(&sc, f->cache, &other);
	tsc_free(&sc);
	src = entry_path(f, &other);
	dst = entry_path(f, &good);
	cmd = xasprintf("cp -p '%s' '%s'", src, dst);
	assert_int_equal(system(cmd), 0);
	expect_recompile(f, &good);
	free(cmd);
	free(src);
	free(dst);
	seccomp_prog_free(&good);
	seccomp_prog_free(&other);
}

static void test_corrupt_insns(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog good;
	char *path;
	uint8_t x = 0xff;

	prepare(&f->docker, f->cache, &good);
	path = entry_path(f, &good);
	/* one bit of one jump offset: the header is intact */
	poke(path, OFF_INSNS + 8 * (good.len / 2) + 2, &x, 1);
	expect_recompile(f, &good);
	free(path);
	seccomp_prog_free(&good);
}

static void test_truncated(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog good;
	char *path;

	prepare(&f->docker, f->cache, &good);
	path = entry_path(f, &good);
	assert_int_equal(truncate(path, OFF_INSNS + 8 * 3), 0);
	expect_recompile(f, &good);
	assert_int_equal(truncate(path, 10), 0);
	expect_recompile(f, &good);
	free(path);
	seccomp_prog_free(&good);
}

/* An entry that others could have written is not trusted. */
static void test_entry_mode(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog good;
	struct stat st;
	char *path;

	prepare(&f->docker, f->cache, &good);
	path = entry_path(f, &good);
	assert_int_equal(chmod(path, 0666), 0);
	expect_recompile(f, &good);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	free(path);
	seccomp_prog_free(&good);
}

static void expect_no_cache(const struct fixture *f, const char *cache)
{
	unsigned before = seccomp_compile_count();
	struct seccomp_prog a, b;

	prepare(&f->docker, cache, &a);
	prepare(&f->docker, cache, &b);
	assert_false(b.from_cache);
	assert_int_equal(seccomp_compile_count(), before + 2);
	assert_same_prog(&a, &b);
	seccomp_prog_free(&a);
	seccomp_prog_free(&b);
}

static int count_entries(const char *dir)
{
	char *cmd = xasprintf("ls -A '%s' | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;

	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	free(cmd);
	return n;
}

static void make_old_file(const char *dir, const char *name, time_t age)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct timespec ts[2];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
	free(path);
}

static void test_dir_symlink_refused(void **state)
{
	struct fixture *f = *state;
	char *target = xasprintf("%s/elsewhere", f->tmp);
	char *link = xasprintf("%s/link-cache", f->tmp);

	assert_int_equal(mkdir(target, 0700), 0);
	assert_int_equal(symlink(target, link), 0);
	expect_no_cache(f, link);
	/* nothing written through the link */
	assert_int_equal(count_entries(target), 0);
	free(target);
	free(link);
}

static void test_dir_mode_refused(void **state)
{
	struct fixture *f = *state;
	char *dir = xasprintf("%s/open-cache", f->tmp);

	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	expect_no_cache(f, dir);
	free(dir);
}

static void test_no_cache_dir(void **state)
{
	struct fixture *f = *state;

	expect_no_cache(f, NULL);
	/* a parent that does not exist: compiled, not an error */
	expect_no_cache(f, "/nonexistent-agentsbx/seccomp-cache");
}

/* A full cache evicts its oldest entry; dead temp files are swept. */
static void test_eviction(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog p;
	char name[PATH_MAX];
	struct stat st;
	char *path;

	assert_int_equal(mkdir(f->cache, 0700), 0);
	for (int i = 0; i < SECCOMP_CACHE_MAX_ENTRIES; i++) {
		snprintf(name, sizeof(name), "%064d", i);
		make_old_file(f->cache, name, 1000 + i); /* 0 is the youngest */
	}
	make_old_file(f->cache, ".tmp-dead-1", 3600);
	make_old_file(f->cache, ".tmp-live-2", 0);
	prepare(&f->docker, f->cache, &p);
	assert_false(p.from_cache);
	assert_int_equal(count_entries(f->cache),
			 SECCOMP_CACHE_MAX_ENTRIES + 1 /* .tmp-live-2 */);
	snprintf(name, sizeof(name), "%s/%064d", f->cache,
		 SECCOMP_CACHE_MAX_ENTRIES - 1);
	assert_int_equal(stat(name, &st), -1); /* the oldest went */
	snprintf(name, sizeof(name), "%s/%064d", f->cache, 0);
	assert_int_equal(stat(name, &st), 0);
	path = entry_path(f, &p);
	assert_int_equal(stat(path, &st), 0);
	free(path);
	path = xasprintf("%s/.tmp-dead-1", f->cache);
	assert_int_equal(stat(path, &st), -1);
	free(path);
	seccomp_prog_free(&p);
}

static void child_cached_docker(void *arg, int listener)
{
	TSC_EXPECT_ERRNO(mount("none", "/nonexistent", "tmpfs", 0, NULL), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_clone3, NULL, 0), ENOSYS);
	TSC_EXPECT_ERRNO(syscall(1000), ENOSYS);
	TSC_EXPECT_OK(syscall(SYS_getppid));
}

/* What comes out of the cache loads and filters like the original. */
static void test_cached_prog_loads(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog a, b;
	struct tsc_result r;

	prepare(&f->docker, f->cache, &a);
	prepare(&f->docker, f->cache, &b);
	assert_true(b.from_cache);
	tsc_run(&b, child_cached_docker, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&a);
	seccomp_prog_free(&b);
}

/* ---- what the cache buys (printed, not asserted) ------------------------- */

static void test_bench(void **state)
{
	struct fixture *f = *state;
	enum { N_COMPILE = 30, N_HIT = 1000 };
	struct seccomp_prog p;
	size_t names = 0;
	double t0, compile_ms, hit_ms, key_ms;
	uint8_t key[32];

	for (size_t i = 0; i < f->docker.n_syscalls; i++)
		names += f->docker.syscalls[i].names.len;
	prepare(&f->docker, f->cache, &p); /* warm libseccomp and the cache */
	seccomp_prog_free(&p);

	t0 = tsc_now_ms();
	for (int i = 0; i < N_COMPILE; i++) {
		prepare(&f->docker, NULL, &p);
		seccomp_prog_free(&p);
	}
	compile_ms = (tsc_now_ms() - t0) / N_COMPILE;

	t0 = tsc_now_ms();
	for (int i = 0; i < N_HIT; i++) {
		prepare(&f->docker, f->cache, &p);
		assert_true(p.from_cache);
		seccomp_prog_free(&p);
	}
	hit_ms = (tsc_now_ms() - t0) / N_HIT;

	t0 = tsc_now_ms();
	for (int i = 0; i < N_HIT; i++)
		seccomp_cache_key(&f->docker, key);
	key_ms = (tsc_now_ms() - t0) / N_HIT;

	prepare(&f->docker, f->cache, &p);
	print_message("seccomp bench: Docker-like profile, %zu names in %zu "
		      "entries, %u BPF instructions\n",
		      names, f->docker.n_syscalls, p.len);
	print_message("seccomp bench: compile %.3f ms, cache hit %.4f ms "
		      "(of which key %.4f ms): %.0fx\n",
		      compile_ms, hit_ms, key_ms, compile_ms / hit_ms);
	seccomp_prog_free(&p);
}

/* ---- a built-in profile, keyed by its text ----------------------------- */

static void test_builtin_keyed_by_text(void **state)
{
	struct fixture *f = *state;
	static const char text[] = "the profile's text";
	uint8_t k1[32], k2[32], k3[32];
	struct seccomp_prog miss, built, hit, plain;
	struct error err;

	seccomp_text_key("variant", text, k1);
	seccomp_text_key("other variant", text, k2);
	seccomp_text_key("variant", "another text", k3);
	assert_memory_not_equal(k1, k2, 32);
	assert_memory_not_equal(k1, k3, 32);

	/* A miss reports nothing and leaves an empty program. */
	assert_int_equal(seccomp_prepare_builtin_cached(k1, f->cache, &miss), -1);
	assert_int_equal(miss.len, 0);
	assert_null(miss.insns);
	error_clear(&err);
	assert_int_equal(seccomp_prepare_builtin(&f->docker, k1, f->cache, &built, &err), 0);
	assert_false(built.from_cache);
	/* The next create finds it by the text's key alone: no profile. */
	assert_int_equal(seccomp_prepare_builtin_cached(k1, f->cache, &hit), 0);
	assert_true(hit.from_cache);
	assert_same_prog(&built, &hit);
	/* The same program as the profile's own key gives, under another key. */
	prepare(&f->docker, f->cache, &plain);
	assert_int_equal(plain.len, built.len);
	assert_memory_equal(plain.insns, built.insns, plain.len * sizeof(*plain.insns));
	assert_string_not_equal(plain.key, built.key);
	/* No cache directory: always a miss. */
	assert_int_equal(seccomp_prepare_builtin_cached(k1, NULL, &miss), -1);
	seccomp_prog_free(&built);
	seccomp_prog_free(&hit);
	seccomp_prog_free(&plain);
}

static void test_builtin_with_flags_refused(void **state)
{
	struct fixture *f = *state;
	struct seccomp_prog prog;
	struct oci_seccomp sc;
	struct error err;
	uint8_t key[32];

	tsc_parse("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
		  " \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"],"
		  " \"syscalls\": [{\"names\": [\"getpid\"],"
		  " \"action\": \"SCMP_ACT_ERRNO\"}]}", &sc);
	seccomp_text_key("flags", "x", key);
	error_clear(&err);
	assert_int_equal(seccomp_prepare_builtin(&sc, key, f->cache, &prog, &err), -1);
	assert_non_null(strstr(err.msg, "flags or a listener"));
	tsc_free(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_key),
		cmocka_unit_test_setup_teardown(test_hit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hit_flags_not_cached,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_lib_version_not_trusted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_key_mismatch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_planted_entry, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_insns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entry_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_symlink_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dir_mode_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_cache_dir, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_eviction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cached_prog_loads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bench, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builtin_keyed_by_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builtin_with_flags_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
