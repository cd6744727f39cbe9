/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* What the Python version and API the component is built for allow, decided once for every
 * file (through shared.h). The limited API (one abi3 build for several versions) lacks some
 * faster calls; each macro is 1 where the faster form may be used. */
#ifndef DLPM_PY_COMPAT_H
#define DLPM_PY_COMPAT_H

#include <Python.h>

/* PyErr_GetRaisedException and PyErr_SetRaisedException (3.12), else PyErr_Fetch and
 * PyErr_Restore. */
#if (defined(Py_LIMITED_API) ? Py_LIMITED_API + 0 : PY_VERSION_HEX) >= 0x030C0000
#define DLPM_PY_RAISED_EXCEPTION 1
#else
#define DLPM_PY_RAISED_EXCEPTION 0
#endif

/* Vectorcall (PyObject_Vectorcall, PyObject_VectorcallMethod): the limited API has it from
 * 3.12; below, calls go through PyObject_Call (a little slower per call). */
#if !defined(Py_LIMITED_API) || Py_LIMITED_API + 0 >= 0x030C0000
#define DLPM_PY_VECTORCALL 1
#else
#define DLPM_PY_VECTORCALL 0
#endif

/* The full API: a method without arguments called through its C function, skipping the
 * generic call machinery (the semantic-bits queries run on every import), an attribute that
 * is a C getter read through it, and PyGILState_Check. */
#if !defined(Py_LIMITED_API)
#define DLPM_PY_FULL_API 1
#else
#define DLPM_PY_FULL_API 0
#endif

/* A vectorcall's keyword names (always a tuple): its size and items, read in place with the
 * full API (no call, no type test), through the calls in the limited API. */
#if DLPM_PY_FULL_API
#define DLPM_PY_KWNAMES_SIZE(kwnames) PyTuple_GET_SIZE(kwnames)
#define DLPM_PY_KWNAME(kwnames, i) PyTuple_GET_ITEM(kwnames, i)
#else
#define DLPM_PY_KWNAMES_SIZE(kwnames) PyTuple_Size(kwnames)
#define DLPM_PY_KWNAME(kwnames, i) PyTuple_GetItem(kwnames, i)
#endif

/* The full API with the GIL: a type's version tag (changed by every assignment to the type
 * or to one of its bases) keys a cache of borrowed method lookups. */
#if !defined(Py_LIMITED_API) && !defined(Py_GIL_DISABLED)
#define DLPM_PY_METHOD_CACHE 1
#else
#define DLPM_PY_METHOD_CACHE 0
#endif

#endif
