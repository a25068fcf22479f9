# collc_set_warnings(target): the one place warning flags are set.
function(collc_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 false positives inside yaml-cpp's and LLVM's inline headers.
    target_compile_options(${target} PRIVATE -Wno-dangling-pointer -Wno-maybe-uninitialized)
  endif()
  if(COLLC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
