// 2. Checked import: to_mdspan<M>(tensor) against the same DLTensor read into an M without
// a single check, for ranks 1, 2 and 4 and the three layout families (layout_right,
// layout_stride, layout_stride_relaxed). float, std::int64_t index type, a compact
// row-major CPU tensor: the case every consumer sees most.
#include <catch2/catch.hpp>

#include "common.hpp"

namespace {

alignas(64) float g_data[256];

template <class M>
void import_group(const char* layout, bench::tensor_fixture<M::rank()>& fx) {
  constexpr std::size_t R = M::rank();
  {
    const M checked = dm::to_mdspan<M>(fx.t);
    const M raw = bench::raw_read<M>(fx.t);
    REQUIRE(checked.data_handle() == raw.data_handle());
    REQUIRE(checked.mapping().required_span_size() == raw.mapping().required_span_size());
    for (std::size_t r = 0; r < R; ++r) {
      REQUIRE(checked.extent(r) == raw.extent(r));
      REQUIRE(checked.stride(r) == raw.stride(r));
    }
  }
  DLTensor* t = &fx.t;
  bench::compare("import view",
                 bench::op(bench::label("rank %zu, %s: raw read, no checks", R, layout),
                           [t]() mutable {
                             bench::launder(t);
                             bench::launder(*t);
                             M m = bench::raw_read<M>(*t);
                             bench::escape(&m);
                           }),
                 {bench::op(bench::label("rank %zu, %s: to_mdspan<M>(t)", R, layout), [t]() mutable {
                   bench::launder(t);
                   bench::launder(*t);
                   M m = dm::to_mdspan<M>(*t);
                   bench::escape(&m);
                 })});
}

template <std::size_t R>
void import_rank(const std::array<std::int64_t, R>& shape) {
  using E = std::dextents<std::int64_t, R>;
  bench::tensor_fixture<R> fx(g_data, shape);
  import_group<std::mdspan<float, E, std::layout_right>>("layout_right", fx);
  import_group<std::mdspan<float, E, std::layout_stride>>("layout_stride", fx);
  import_group<std::mdspan<float, E, dm::layout_stride_relaxed>>("layout_stride_relaxed", fx);
}

}  // namespace

TEST_CASE("import view: to_mdspan<M>(t) vs a raw read", "[import]") {
  import_rank<1>({64});
  import_rank<2>({8, 8});
  import_rank<4>({2, 3, 4, 5});
}
