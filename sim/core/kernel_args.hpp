// kernel_args.hpp: one struct per kernel for its arguments.
//
// A kernel's arguments live in a struct with an `args()` member that ties
// them in the kernel's parameter order. The functor's type is derived from
// that list (KernelFunctorOf) and Profiler::launch passes them, so the order and the
// types are written once, next to each other, and the fields are filled in
// one place by name instead of by position:
//
//   struct FooArgs { const cl::Buffer& in; cl_uint n;
//                    auto args() const { return std::tie(in, n); } };
//   KernelFunctorOf<FooArgs> foo_{program, "foo"};
//   profiler.launch("foo", foo_, range, FooArgs{.in = buf, .n = n});
#pragma once

#include "cl.hpp"

#include <tuple>
#include <type_traits>

namespace eddy {

template <class Tuple>
struct KernelFunctorFor;
template <class... T>
struct KernelFunctorFor<std::tuple<T&...>> {
  using type = KernelFunctor<std::remove_const_t<T>...>;
};
template <class Args>
using KernelFunctorOf =
    typename KernelFunctorFor<decltype(std::declval<const Args&>().args())>::type;

}  // namespace eddy
