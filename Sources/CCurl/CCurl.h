/*
 * CCurl: libcurl for Swift.
 *
 * curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic, which Swift cannot call.
 * Each wrapper below fixes one argument type, so every call from Swift is type-checked.
 * Callback types are spelled out so Swift sees real @convention(c) function types.
 * Nothing here is public API of Curlew: the Swift modules import CCurl with `internal import`.
 */
#ifndef CCURL_H
#define CCURL_H

#include <curl/curl.h>
#include <stddef.h>

/* Callback signatures, named once. */
typedef size_t (*ccurl_data_callback)(char *_Nonnull buffer, size_t size, size_t count, void *_Nullable userdata);
typedef curl_socket_t (*ccurl_opensocket_callback)(void *_Nullable clientp, curlsocktype purpose,
                                                   struct curl_sockaddr *_Nonnull address);
typedef int (*ccurl_closesocket_callback)(void *_Nullable clientp, curl_socket_t socket);
typedef int (*ccurl_seek_callback)(void *_Nullable userdata, curl_off_t offset, int origin);
typedef int (*ccurl_socket_callback)(CURL *_Nonnull easy, curl_socket_t socket, int what,
                                     void *_Nullable userp, void *_Nullable socketp);
typedef int (*ccurl_timer_callback)(CURLM *_Nonnull multi, long timeout_ms, void *_Nullable userp);
typedef int (*ccurl_debug_callback)(CURL *_Nonnull easy, curl_infotype type, char *_Nonnull data, size_t size,
                                    void *_Nullable userp);
typedef void (*ccurl_lock_callback)(CURL *_Nullable easy, curl_lock_data data, curl_lock_access access,
                                    void *_Nullable userp);
typedef void (*ccurl_unlock_callback)(CURL *_Nullable easy, curl_lock_data data, void *_Nullable userp);

/* curl_easy_setopt */
static inline CURLcode ccurl_easy_setopt_long(CURL *_Nonnull h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_off_t(CURL *_Nonnull h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_ptr(CURL *_Nonnull h, CURLoption o, void *_Nullable v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_string(CURL *_Nonnull h, CURLoption o, const char *_Nullable v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_slist(CURL *_Nonnull h, CURLoption o, struct curl_slist *_Nullable v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_data_callback(CURL *_Nonnull h, CURLoption o, ccurl_data_callback _Nullable v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_opensocket_callback(CURL *_Nonnull h, ccurl_opensocket_callback _Nullable v) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, v); }
static inline CURLcode ccurl_easy_setopt_closesocket_callback(CURL *_Nonnull h, ccurl_closesocket_callback _Nullable v) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, v); }
static inline CURLcode ccurl_easy_setopt_seek_callback(CURL *_Nonnull h, ccurl_seek_callback _Nullable v) { return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, v); }
static inline CURLcode ccurl_easy_setopt_debug_callback(CURL *_Nonnull h, ccurl_debug_callback _Nullable v) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, v); }

/* curl_multi_setopt */
static inline CURLMcode ccurl_multi_setopt_long(CURLM *_Nonnull m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode ccurl_multi_setopt_ptr(CURLM *_Nonnull m, CURLMoption o, void *_Nullable v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode ccurl_multi_setopt_socket_callback(CURLM *_Nonnull m, ccurl_socket_callback _Nullable v) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, v); }
static inline CURLMcode ccurl_multi_setopt_timer_callback(CURLM *_Nonnull m, ccurl_timer_callback _Nullable v) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, v); }

/* curl_share_setopt */
static inline CURLSHcode ccurl_share_setopt_long(CURLSH *_Nonnull s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }
static inline CURLSHcode ccurl_share_setopt_ptr(CURLSH *_Nonnull s, CURLSHoption o, void *_Nullable v) { return curl_share_setopt(s, o, v); }
static inline CURLSHcode ccurl_share_setopt_lock_callback(CURLSH *_Nonnull s, ccurl_lock_callback _Nullable v) { return curl_share_setopt(s, CURLSHOPT_LOCKFUNC, v); }
static inline CURLSHcode ccurl_share_setopt_unlock_callback(CURLSH *_Nonnull s, ccurl_unlock_callback _Nullable v) { return curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, v); }

/* curl_easy_getinfo */
static inline CURLcode ccurl_easy_getinfo_long(CURL *_Nonnull h, CURLINFO i, long *_Nonnull v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_off_t(CURL *_Nonnull h, CURLINFO i, curl_off_t *_Nonnull v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_string(CURL *_Nonnull h, CURLINFO i, const char *_Nullable *_Nonnull v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_ptr(CURL *_Nonnull h, CURLINFO i, void *_Nullable *_Nonnull v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_slist(CURL *_Nonnull h, CURLINFO i, struct curl_slist *_Nullable *_Nonnull v) { return curl_easy_getinfo(h, i, v); }

/* CURLMsg's `data` is a union, which Swift imports awkwardly: read the result here. */
static inline CURLcode ccurl_message_result(const CURLMsg *_Nonnull m) { return m->data.result; }

/* CURL_WRITEFUNC_PAUSE and friends are macros of casts Swift does not import. */
static inline size_t ccurl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline size_t ccurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
static inline size_t ccurl_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
static inline curl_socket_t ccurl_socket_bad(void) { return CURL_SOCKET_BAD; }

/* The CURLAUTH_* bits are macros of unsigned long casts Swift does not import. */
static inline long ccurl_auth_basic(void) { return (long)CURLAUTH_BASIC; }
static inline long ccurl_auth_digest(void) { return (long)CURLAUTH_DIGEST; }

/* CURLHSTS_ENABLE is a macro of a cast Swift does not import. */
static inline long ccurl_hsts_enable(void) { return CURLHSTS_ENABLE; }

/* CURLINFO_CONN_ID (curl 8.2: CURLINFO_OFF_T + 64), which older headers lack; older libraries answer
   CURLE_UNKNOWN_OPTION, so ask only when the runtime library is 8.2 or later. */
static inline CURLINFO ccurl_info_conn_id(void) { return (CURLINFO)(CURLINFO_OFF_T + 64); }

/* The runtime libcurl's version numbers (not the headers'). */
static inline unsigned int ccurl_runtime_version_num(void) { return curl_version_info(CURLVERSION_NOW)->version_num; }
static inline int ccurl_runtime_features(void) { return curl_version_info(CURLVERSION_NOW)->features; }
static inline const char *_Nullable ccurl_runtime_version(void) { return curl_version_info(CURLVERSION_NOW)->version; }

#endif
