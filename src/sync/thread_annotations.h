// Clang's thread-safety attributes, as macros that expand to nothing on a
// compiler without them (GCC), so lock rules are written once, in the code,
// and `-Wthread-safety` checks them wherever the build uses clang.
//
// GUARDED_BY(mu) on a member: read or written only with `mu` held.
// PT_GUARDED_BY(mu) on a pointer: what it points to, only with `mu` held.
// REQUIRES(mu) on a function: its caller holds `mu` (REQUIRES_SHARED: at
// least shared). EXCLUDES(mu): its caller does not hold `mu` (it takes it).
// ACQUIRED_BEFORE / ACQUIRED_AFTER: the order in which two mutexes are taken.
// ACQUIRE / RELEASE / TRY_ACQUIRE: a function that takes or lets go of a
// capability; CAPABILITY names a type that is one, SCOPED_CAPABILITY an RAII
// holder of one. NO_THREAD_SAFETY_ANALYSIS opts one function out: each use
// says why the rule holds without the compiler's proof.
// Not part of the public API.
#pragma once

#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(capability)
#define SNOWID_THREAD_ANNOTATION(x) __attribute__((x))
#endif
#endif
#ifndef SNOWID_THREAD_ANNOTATION
#define SNOWID_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(name) SNOWID_THREAD_ANNOTATION(capability(name))
#define SCOPED_CAPABILITY SNOWID_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) SNOWID_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) SNOWID_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) SNOWID_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) SNOWID_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) SNOWID_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) SNOWID_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) SNOWID_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) SNOWID_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) SNOWID_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) SNOWID_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) SNOWID_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) SNOWID_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SNOWID_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) SNOWID_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) SNOWID_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS SNOWID_THREAD_ANNOTATION(no_thread_safety_analysis)
