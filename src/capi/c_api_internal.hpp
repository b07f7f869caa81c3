// What the C API's translation units share (c_api.cpp: 2D fields; c_api3d.cpp: 3D fields):
// the per-thread error message, the conversion of a Status into a factz_status, the guard
// that keeps exceptions inside the library, and the reading of the plain option struct.
#pragma once

#include <cstdint>
#include <new>
#include <span>
#include <stdexcept>
#include <string>

#include "factz/factz.h"
#include "factz/factz.hpp"

namespace factz::capi {

/// The message factz_last_error() returns on this thread ("" after a success).
extern thread_local std::string g_last_error;

/// Records "<status name>: message" for this thread and returns s.
factz_status fail(factz_status s, std::string message);

/// FACTZ_OK (clearing the message) or the status's code with its text as the message.
factz_status from_status(const factz::Status& st);

/// Runs f, turning any escaping exception into FACTZ_INTERNAL.
template <class F>
factz_status guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(FACTZ_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(FACTZ_INTERNAL, e.what());
  } catch (...) {
    return fail(FACTZ_INTERNAL, "unknown exception");
  }
}

/// Rejects a struct too small for the 1.0.0 members (not initialized by factz_options_init).
factz_status check_struct_size(const factz_options* in);

/// The execution settings: policy (1.1.0: when the struct holds it), threads and device.
factz_status execution_of(const factz_options* in, factz::Policy& policy, int& threads, int& device);

/// The threads of the analysis calls (compare, critical points): options' (NULL: the OpenMP
/// default); policy and device play no part in them.
factz_status analysis_threads(const factz_options* in, int& threads);

/// The compression options of a factz_options (NULL: the defaults), checked: mode, coder,
/// bound, zstd, anchor stride, the execution settings and the progress callback. Fill
/// values are not read here.
factz_status options_of(const factz_options* in, factz::Options& o);

/// Whether options declare a float32 fill value (1.2.0 members, when the struct holds them).
bool declares_float32_fill(const factz_options* in);

/// Whether options declare a float64 fill value (1.4.0 members, when the struct holds them).
bool declares_float64_fill(const factz_options* in);

/// Whether options declare a float32 (has_fill_w) or float64 (has_fill_w64) fill value of w,
/// the third component of 3D fields (1.8.0 members, when the struct holds them).
bool declares_float32_fill_w(const factz_options* in);
bool declares_float64_fill_w(const factz_options* in);

/// A 2D function's failure to read `stream` (stream_info, decompress_into): a valid 3D
/// vector stream is FACTZ_INVALID_ARGUMENT naming the 3D functions (c_api3d.cpp); anything
/// else keeps the library's status and message.
factz_status status_of_2d_read(std::span<const uint8_t> stream, const factz::Status& st);

}  // namespace factz::capi
