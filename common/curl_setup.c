/* The one set-up of a libcurl handle; the contract is in curl_setup.h. */
#include "common/curl_setup.h"

#include <errno.h>
#include <stdbool.h>

int curl_setup_global(void)
{
	static bool done;

	if (done)
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	done = true;
	return 0;
}

int curl_setup_handle(CURL *h, const struct http_client_opts *o)
{
	if ((o->ca_file && curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file) != CURLE_OK) ||
	    (o->ca_only && curl_easy_setopt(h, CURLOPT_CAPATH, NULL) != CURLE_OK) ||
	    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, o->allow_http ? "https,http" : "https") !=
		    CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    (o->connect_timeout &&
	     curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, o->connect_timeout) != CURLE_OK) ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT, o->total_timeout) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
	    (o->user_agent && curl_easy_setopt(h, CURLOPT_USERAGENT, o->user_agent) != CURLE_OK))
		return -EINVAL;
	return 0;
}
