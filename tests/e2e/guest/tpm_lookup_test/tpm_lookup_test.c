// SPDX-License-Identifier: GPL-2.0-only
/*
 * tpm_lookup_test: lets the guest of tests/e2e/81-second-chip.sh ask the kernel's
 * tpm_chip_lookup() (kernel-patches/0001) which chip a device number names, while chips
 * come and go (vtpm proxy chips made by swtpm in the guest).
 *
 *   echo N >/sys/module/tpm_lookup_test/parameters/lookup
 *   cat /sys/module/tpm_lookup_test/parameters/lookup
 *
 * The answer is "N none" when tpm_chip_lookup(N) returns NULL, else
 * "N NAME dev_num=D ops=yes|no": the device name and number of the chip it returned, and
 * whether the chip still takes commands (tpm_try_get_ops()). The reference the lookup took
 * is dropped before the write returns. The module exists for the test only.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/tpm.h>

static DEFINE_MUTEX(answer_lock);
static char answer[96] = "none\n";

static int lookup_set(const char *val, const struct kernel_param *kp)
{
	struct tpm_chip *chip;
	bool usable = false;
	int num, rc;

	rc = kstrtoint(val, 10, &num);
	if (rc)
		return rc;

	chip = tpm_chip_lookup(num);
	if (chip && !tpm_try_get_ops(chip)) {
		usable = true;
		tpm_put_ops(chip);
	}

	mutex_lock(&answer_lock);
	if (chip)
		scnprintf(answer, sizeof(answer), "%d %s dev_num=%d ops=%s\n", num,
			  dev_name(&chip->dev), chip->dev_num, usable ? "yes" : "no");
	else
		scnprintf(answer, sizeof(answer), "%d none\n", num);
	mutex_unlock(&answer_lock);

	if (chip)
		put_device(&chip->dev);
	return 0;
}

static int lookup_get(char *buf, const struct kernel_param *kp)
{
	int n;

	mutex_lock(&answer_lock);
	n = sysfs_emit(buf, "%s", answer);
	mutex_unlock(&answer_lock);
	return n;
}

static const struct kernel_param_ops lookup_ops = {
	.set = lookup_set,
	.get = lookup_get,
};
module_param_cb(lookup, &lookup_ops, NULL, 0600);
MODULE_PARM_DESC(lookup, "write a TPM device number, read what tpm_chip_lookup() returned");

MODULE_DESCRIPTION("test driver for tpm_chip_lookup()");
MODULE_LICENSE("GPL");
