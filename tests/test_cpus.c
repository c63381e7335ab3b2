/* sim/cpus.c: the CPUs a cgroup CPU quota grants (cpus_quota), read from fixture trees laid
 * out as the kernel mounts them (cgroups(7); Documentation/admin-guide/cgroup-v2.rst, "cpu.max":
 * "$MAX $PERIOD", "max" for no limit; cgroup-v1/cfs: cpu.cfs_quota_us, -1 for no limit, and
 * cpu.cfs_period_us). The expected counts are the quota divided by the period, rounded down,
 * at least one: a worker per whole CPU granted. */
#include "sim/cpus.h"
#include "tests/testutil.h"

/* Writes ROOT/REL (making its folders) with TEXT. */
static void put(const char *root, const char *rel, const char *text)
{
    char *path = g_build_filename(root, rel, NULL), *dir = g_path_get_dirname(path);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(dir, 0755), 0);
    CU_ASSERT_FATAL(g_file_set_contents(path, text, -1, NULL));
    g_free(dir);
    g_free(path);
}

/* An empty fixture root in place of *root (removed, if any). */
static void fresh(char **root)
{
    if (*root) {
        test_rmtree(*root);
        g_free(*root);
    }
    *root = test_tmpdir();
}

/* cgroup v2: the process's own cgroup, a parent's tighter limit, no limit, a hybrid layout */
static void test_v2(void)
{
    char *root = test_tmpdir();
    put(root, "user.slice/app/cpu.max", "200000 100000\n");
    put(root, "user.slice/cpu.max", "max 100000\n");
    CU_ASSERT_EQUAL(cpus_quota("0::/user.slice/app\n", root), 2);
    /* 1.5 CPUs on the parent bind the child: one whole CPU */
    put(root, "user.slice/cpu.max", "150000 100000\n");
    CU_ASSERT_EQUAL(cpus_quota("0::/user.slice/app\n", root), 1);
    put(root, "user.slice/cpu.max", "max 100000\n");
    put(root, "user.slice/app/cpu.max", "max 100000\n");
    CU_ASSERT_EQUAL(cpus_quota("0::/user.slice/app\n", root), 0);
    /* a quota under one period still leaves one CPU */
    put(root, "user.slice/app/cpu.max", "25000 100000\n");
    CU_ASSERT_EQUAL(cpus_quota("0::/user.slice/app\n", root), 1);
    /* systemd's hybrid layout mounts v2 at ROOT/unified */
    put(root, "unified/job/cpu.max", "400000 100000\n");
    CU_ASSERT_EQUAL(cpus_quota("0::/job\n", root), 4);
    test_rmtree(root);
    g_free(root);
}

/* cgroup v1: the cpu controller's hierarchy, named by its controllers; a container whose
 * hierarchy root is its own cgroup (the path /proc/self/cgroup names is not under it) */
static void test_v1(void)
{
    char *root = NULL;
    const char *self = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n";
    fresh(&root);
    put(root, "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
    put(root, "cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    CU_ASSERT_EQUAL(cpus_quota(self, root), 3);
    put(root, "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    CU_ASSERT_EQUAL(cpus_quota(self, root), 0);

    fresh(&root); /* the container's own cgroup as the hierarchy's root */
    put(root, "cpu,cpuacct/cpu.cfs_quota_us", "200000\n");
    put(root, "cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    CU_ASSERT_EQUAL(cpus_quota(self, root), 2);

    fresh(&root); /* the controller alone under ROOT/cpu (this machine's layout: 1:cpu:/) */
    put(root, "cpu/rs/cpu.cfs_quota_us", "100000\n");
    put(root, "cpu/rs/cpu.cfs_period_us", "50000\n");
    CU_ASSERT_EQUAL(cpus_quota("2:cpuacct:/\n1:cpu:/rs\n", root), 2);
    /* a hierarchy without the cpu controller sets no CPU limit */
    CU_ASSERT_EQUAL(cpus_quota("1:cpuacct:/rs\n", root), 0);
    test_rmtree(root);
    g_free(root);
}

/* the least of v1's and v2's limits; nothing readable is no limit */
static void test_least_and_none(void)
{
    char *root = test_tmpdir();
    put(root, "cpu/a/cpu.cfs_quota_us", "500000\n");
    put(root, "cpu/a/cpu.cfs_period_us", "100000\n");
    put(root, "b/cpu.max", "300000 100000\n");
    CU_ASSERT_EQUAL(cpus_quota("1:cpu:/a\n0::/b\n", root), 3);
    CU_ASSERT_EQUAL(cpus_quota("", root), 0);
    CU_ASSERT_EQUAL(cpus_quota("garbage\n0::relative\n::\n", root), 0);
    put(root, "c/cpu.max", "lots 100000\n");
    CU_ASSERT_EQUAL(cpus_quota("0::/c\n", root), 0);
    put(root, "c/cpu.max", "100000 0\n");
    CU_ASSERT_EQUAL(cpus_quota("0::/c\n", root), 0);
    test_rmtree(root);
    g_free(root);
}

static CU_TestInfo tests[] = {
    { "cgroup v2 cpu.max, of the cgroup or a parent", test_v2 },
    { "cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us", test_v1 },
    { "the least limit; no limit where nothing reads as one", test_least_and_none },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("cpus", tests)
