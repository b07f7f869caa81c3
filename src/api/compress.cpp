// The public compress / decompress entry points: field validation, option checks and the
// execution policy's dispatch (serial and omp to the CPU backend, cuda to the device
// backend). The stream itself is the stream layer's (streams/vector_stream.hpp).
#include <algorithm>
#include <string>
#include <utility>

#include "api/device_backend.hpp"
#include "backend/cpu/cpu_codec.hpp"
#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector_stream.hpp"
#include "util/big_vector.hpp"

namespace factz {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::none: return "none";
    case Mode::block: return "block";
    case Mode::speculative: return "speculative";
  }
  return "unknown";
}

const char* coder_name(Coder c) {
  return c == Coder::huffman    ? "huffman"
         : c == Coder::ans      ? "ans"
         : c == Coder::context  ? "context"
         : c == Coder::smallest ? "smallest"
                                : "unknown";
}

const char* dtype_name(DType t) {
  return t == DType::float32 ? "float32" : t == DType::float64 ? "float64" : "unknown";
}

namespace {

/// The CPU backend's policies (Policy::cuda goes to the device dispatch before this).
Status cpu_policy(Policy p) {
  if (p != Policy::serial && p != Policy::omp) return invalid_argument("unknown execution policy");
  return Status::Ok();
}

/// compress with Policy::cuda (float32 and float64 fields).
template <class Field>
Result<std::vector<uint8_t>> compress_on_device(const Field& field, const Options& o, CompressStats* stats) {
  auto stream = detail::compress_on_device(field, o, stats);
  if (stream.ok() && o.progress) o.progress(Progress{"container", 1.0});  // the device reports only the end
  return stream;
}

}  // namespace

Result<std::vector<uint8_t>> compress(const VectorField2D& field, const Options& o, CompressStats* stats) {
  if (o.policy == Policy::cuda) return compress_on_device(field, o, stats);
  FACTZ_RETURN_IF_ERROR(cpu_policy(o.policy));
  try {
    FACTZ_RETURN_IF_ERROR(validate_field(field));
    FACTZ_RETURN_IF_ERROR(detail::check_vector_options(field.nx, field.ny, o));
    return detail::cpu_compress(field, o, stats);
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + "x" +
                                      std::to_string(field.ny) + " field");
  }
}

Result<std::vector<uint8_t>> compress(const VectorField2D64& field, const Options& o, CompressStats* stats) {
  if (o.policy == Policy::cuda) return compress_on_device(field, o, stats);
  FACTZ_RETURN_IF_ERROR(cpu_policy(o.policy));
  try {
    FACTZ_RETURN_IF_ERROR(validate_field(field));
    FACTZ_RETURN_IF_ERROR(detail::check_vector_options(field.nx, field.ny, o));
    return detail::cpu_compress(field, o, stats);
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + "x" +
                                      std::to_string(field.ny) + " float64 field");
  }
}

namespace {

/// compress of a field the caller gives up (both value types): the CPU's speculative mode
/// works in its planes; the field is left empty whatever ran.
template <class Field>
Result<std::vector<uint8_t>> compress_given(Field& field, const Options& o, CompressStats* stats) {
  Result<std::vector<uint8_t>> out = Status(Code::internal, "not run");
  if (o.policy == Policy::cuda || !cpu_policy(o.policy).ok()) {
    out = compress(std::as_const(field), o, stats);  // the device copies the planes anyway
  } else {
    try {
      const Status valid = validate_field(field);
      const Status checked = valid.ok() ? detail::check_vector_options(field.nx, field.ny, o) : valid;
      out = checked.ok() ? detail::cpu_compress(std::move(field), o, stats) : Result<std::vector<uint8_t>>(checked);
    } catch (const std::bad_alloc&) {
      out = Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + "x" +
                                       std::to_string(field.ny) + " field");
    }
  }
  field = Field{};
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> compress(VectorField2D&& field, const Options& o, CompressStats* stats) {
  return compress_given(field, o, stats);
}

Result<std::vector<uint8_t>> compress(VectorField2D64&& field, const Options& o, CompressStats* stats) {
  return compress_given(field, o, stats);
}

Result<std::pair<int64_t, int64_t>> stream_dims(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_vector_stream(stream);
  if (!parsed.ok()) return parsed.status();
  return std::pair<int64_t, int64_t>{int64_t(parsed->header.nx), int64_t(parsed->header.ny)};
}

int stream_components(std::span<const uint8_t> stream) { return detail::peek_components(stream); }

Result<StreamInfo> stream_info(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_vector_stream(stream);
  if (!parsed.ok()) return parsed.status();
  const auto& h = parsed->header;
  return StreamInfo{int64_t(h.nx), int64_t(h.ny), h.dtype == detail::kDtypeFloat64 ? DType::float64 : DType::float32};
}

namespace {

/// decompress_into, and the stream's mask into *mask_out when given (left as it is for a
/// stream without one).
Status decode_into(std::span<const uint8_t> stream, std::span<float> u_out, std::span<float> v_out,
                   std::vector<uint8_t>* mask_out, const DecompressOptions& o) {
  if (o.policy == Policy::cuda) return detail::decompress_into_on_device(stream, u_out, v_out, o, mask_out);
  FACTZ_RETURN_IF_ERROR(cpu_policy(o.policy));
  try {
    auto parsed = detail::parse_vector_stream(stream);
    if (!parsed.ok()) return parsed.status();
    return detail::cpu_decode(stream, parsed.value(), u_out, v_out,
                              detail::threads_of(o.policy, o.threads, int64_t(u_out.size())), mask_out);
  } catch (const std::bad_alloc&) {
    return detail::out_of_memory_decoding(stream);
  }
}

/// decode_into of a float64 stream.
Status decode_into(std::span<const uint8_t> stream, std::span<double> u_out, std::span<double> v_out,
                   std::vector<uint8_t>* mask_out, const DecompressOptions& o) {
  if (o.policy == Policy::cuda) return detail::decompress_into_on_device(stream, u_out, v_out, o, mask_out);
  FACTZ_RETURN_IF_ERROR(cpu_policy(o.policy));
  try {
    auto parsed = detail::parse_vector_stream(stream);
    if (!parsed.ok()) return parsed.status();
    return detail::cpu_decode(stream, parsed.value(), u_out, v_out,
                              detail::threads_of(o.policy, o.threads, int64_t(u_out.size())), mask_out);
  } catch (const std::bad_alloc&) {
    return detail::out_of_memory_decoding(stream);
  }
}

/// decompress_into with a mask, for float and double planes.
template <class T>
Status decode_into_with_mask(std::span<const uint8_t> stream, std::span<T> u_out, std::span<T> v_out,
                             std::span<uint8_t> mask_out, const DecompressOptions& o) {
  if (mask_out.size() != u_out.size())
    return invalid_argument("the mask output holds " + std::to_string(mask_out.size()) + " bytes, the planes " +
                            std::to_string(u_out.size()) + " values: it must hold one byte per vertex");
  try {
    std::vector<uint8_t> mask;
    FACTZ_RETURN_IF_ERROR(decode_into(stream, u_out, v_out, &mask, o));
    std::fill(mask_out.begin(), mask_out.end(), uint8_t(0));
    if (mask.size() == mask_out.size())
      std::transform(mask.begin(), mask.end(), mask_out.begin(), [](uint8_t m) { return uint8_t(m != 0); });
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return detail::out_of_memory_decoding(stream);
  }
}

/// The field of a stream of value type T (the CPU backend).
template <class Field, class T>
Result<Field> decompress_on_cpu(std::span<const uint8_t> stream, const DecompressOptions& o) {
  auto parsed = detail::parse_vector_stream(stream);
  if (!parsed.ok()) return parsed.status();
  FACTZ_RETURN_IF_ERROR(
      detail::require_dtype(parsed->header, sizeof(T) == 8 ? detail::kDtypeFloat64 : detail::kDtypeFloat32));
  Field f;
  f.nx = int64_t(parsed->header.nx);
  f.ny = int64_t(parsed->header.ny);
  const size_t n = static_cast<size_t>(f.nx * f.ny);
  for (auto* p : {&f.u, &f.v}) detail::resize_fresh(*p, n);
  FACTZ_RETURN_IF_ERROR(detail::cpu_decode(stream, parsed.value(), std::span<T>(f.u), std::span<T>(f.v),
                                           detail::threads_of(o.policy, o.threads, f.nx * f.ny), &f.mask));
  return f;
}

}  // namespace

Status decompress_into(std::span<const uint8_t> stream, std::span<float> u_out, std::span<float> v_out,
                       const DecompressOptions& o) {
  return decode_into(stream, u_out, v_out, nullptr, o);
}

Status decompress_into(std::span<const uint8_t> stream, std::span<float> u_out, std::span<float> v_out,
                       std::span<uint8_t> mask_out, const DecompressOptions& o) {
  return decode_into_with_mask(stream, u_out, v_out, mask_out, o);
}

Status decompress_into(std::span<const uint8_t> stream, std::span<double> u_out, std::span<double> v_out,
                       const DecompressOptions& o) {
  return decode_into(stream, u_out, v_out, nullptr, o);
}

Status decompress_into(std::span<const uint8_t> stream, std::span<double> u_out, std::span<double> v_out,
                       std::span<uint8_t> mask_out, const DecompressOptions& o) {
  return decode_into_with_mask(stream, u_out, v_out, mask_out, o);
}

Result<VectorField2D64> decompress64(std::span<const uint8_t> stream, const DecompressOptions& o) try {
  if (o.policy == Policy::cuda) return detail::decompress64_on_device(stream, o);
  FACTZ_RETURN_IF_ERROR(cpu_policy(o.policy));
  return decompress_on_cpu<VectorField2D64, double>(stream, o);
} catch (const std::bad_alloc&) {
  return detail::out_of_memory_decoding(stream);
}

Result<VectorField2D> decompress(std::span<const uint8_t> stream, const DecompressOptions& o) try {
  if (o.policy == Policy::cuda) return detail::decompress_on_device(stream, o);
  FACTZ_RETURN_IF_ERROR(cpu_policy(o.policy));
  return decompress_on_cpu<VectorField2D, float>(stream, o);
} catch (const std::bad_alloc&) {
  return detail::out_of_memory_decoding(stream);
}

}  // namespace factz
