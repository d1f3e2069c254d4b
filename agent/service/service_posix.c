/* service_posix.c - service.h where there is no Service Control Manager. */
#ifndef _WIN32
#include "service/service.h"

#include "loadlab/err.h"

static int not_here(void)
{
	return err_set(LL_EUNSUPPORTED,
		       "'loadlab-agent service' is for Windows (its Service Control Manager); on "
		       "Linux run the agent from the systemd unit packaging/systemd/"
		       "loadlab-agent.service (make install puts it in place).");
}

int service_install(const char *name, int argc, char **argv)
{
	(void)name, (void)argc, (void)argv;
	return not_here();
}

int service_uninstall(const char *name)
{
	(void)name;
	return not_here();
}

int service_update_watch(const char *name, const char *data_dir, long long confirm_s)
{
	(void)name, (void)data_dir, (void)confirm_s;
	return not_here();
}

int service_run(const char *name, service_work_fn *work, int argc, char **argv)
{
	(void)name, (void)work, (void)argc, (void)argv;
	return not_here();
}
#endif
