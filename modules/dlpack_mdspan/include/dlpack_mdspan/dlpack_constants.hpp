// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLPack's macros as typed constants, because a named module cannot export macros.
#ifndef DLPACK_MDSPAN_DLPACK_CONSTANTS_HPP
#define DLPACK_MDSPAN_DLPACK_CONSTANTS_HPP

#include <dlpack_mdspan/config.hpp>

#include <cstdint>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// The DLPack version these headers were compiled against.
inline constexpr std::uint32_t dlpack_major_version = DLPACK_MAJOR_VERSION;
inline constexpr std::uint32_t dlpack_minor_version = DLPACK_MINOR_VERSION;

/// DLManagedTensorVersioned::flags bits.
inline constexpr std::uint64_t flag_read_only = DLPACK_FLAG_BITMASK_READ_ONLY;
inline constexpr std::uint64_t flag_is_copied = DLPACK_FLAG_BITMASK_IS_COPIED;
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
inline constexpr std::uint64_t flag_is_subbyte_type_padded = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
#else
inline constexpr std::uint64_t flag_is_subbyte_type_padded = std::uint64_t{1} << 2;
#endif

/// This library's own version.
inline constexpr int version_major = DLPACK_MDSPAN_VERSION_MAJOR;
inline constexpr int version_minor = DLPACK_MDSPAN_VERSION_MINOR;
inline constexpr int version_patch = DLPACK_MDSPAN_VERSION_PATCH;

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
