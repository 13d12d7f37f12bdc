// nv<T>: rewrite a type spelled with our headers' declarations (namespace shim)
// into the same type spelled with NVIDIA's, so signatures can be compared with
// std::is_same. Tag types get explicit specialisations (abi_checks.inc).
#pragma once
#include <cstddef>
#include <type_traits>

template <class T> struct nv { using type = T; };
template <class T> using nv_t = typename nv<T>::type;
template <class T> struct nv<T *> { using type = nv_t<T> *; };
template <class T> struct nv<T &> { using type = nv_t<T> &; };
template <class T> struct nv<const T> { using type = const nv_t<T>; };
template <class T> struct nv<volatile T> { using type = volatile nv_t<T>; };
template <class T> struct nv<const volatile T> { using type = const volatile nv_t<T>; };
template <class T, std::size_t N> struct nv<T[N]> { using type = nv_t<T>[N]; };
template <class T, std::size_t N> struct nv<const T[N]> { using type = const nv_t<T>[N]; };
template <class T> struct nv<T[]> { using type = nv_t<T>[]; };
template <class R, class... A> struct nv<R(A...)> { using type = nv_t<R>(nv_t<A>...); };
template <class R, class... A> struct nv<R(A..., ...)> { using type = nv_t<R>(nv_t<A>..., ...); };
template <class R, class... A> struct nv<R(A...) noexcept> { using type = nv_t<R>(nv_t<A>...) noexcept; };
