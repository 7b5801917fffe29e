# Compiler flags shared by every target of the project (through nkia_options).
add_library(nkia_options INTERFACE)
target_compile_options(nkia_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                              -Wcast-align -Wformat=2 -Wimplicit-fallthrough
                                              # GCC 12 false positive on std::string concatenation (GCC PR 105651)
                                              -Wno-restrict)
if(NKIA_WERROR)
  target_compile_options(nkia_options INTERFACE -Werror)
endif()
# Results must not depend on whether the compiler fuses a*b+c: keep IEEE semantics everywhere.
target_compile_options(nkia_options INTERFACE -ffp-contract=off)
if(NKIA_SANITIZE)
  target_compile_options(nkia_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                -fno-sanitize-recover=undefined)
  target_link_options(nkia_options INTERFACE -fsanitize=address,undefined)
endif()
