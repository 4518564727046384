# Message code from proto/ with protoc-c (docs/internals/device-plugin.md).
#
# Only messages are generated: protoc-c 1.4.1 names the Registration
# service's member `register`, a C keyword, so the services (which carve
# serves through the gRPC C core in src/node/dpgrpc.c) are cut off first.
# A .proto file given here keeps its services at its end, after every
# message.
#
# Included from CMakeLists.txt it defines carve_proto_messages(); run as a
# script (cmake -DIN=... -DOUT=... -P proto_messages.cmake) it writes IN
# without its services to OUT.
if(CMAKE_SCRIPT_MODE_FILE)
  file(READ "${IN}" text)
  string(FIND "${text}" "\nservice " cut)
  if(cut GREATER -1)
    string(SUBSTRING "${text}" 0 ${cut} text)
  endif()
  file(WRITE "${OUT}" "${text}\n")
  return()
endif()

set(CARVE_PROTO_MESSAGES_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

# carve_proto_messages(<var> <file.proto relative to proto/> ...):
# appends the generated .pb-c.c files to <var>; the headers land in
# ${CMAKE_CURRENT_BINARY_DIR}/proto/<dir>/<name>.pb-c.h.
function(carve_proto_messages var)
  set(out_list ${${var}})
  foreach(rel ${ARGN})
    get_filename_component(dir ${rel} DIRECTORY)
    get_filename_component(name ${rel} NAME_WE)
    set(src ${PROJECT_SOURCE_DIR}/proto/${rel})
    set(msgs ${CMAKE_CURRENT_BINARY_DIR}/proto-messages/${rel})
    set(gen ${CMAKE_CURRENT_BINARY_DIR}/proto/${dir}/${name}.pb-c)
    add_custom_command(
      OUTPUT ${gen}.c ${gen}.h
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/proto-messages/${dir}
      COMMAND ${CMAKE_COMMAND} -DIN=${src} -DOUT=${msgs} -P ${CARVE_PROTO_MESSAGES_SCRIPT}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/proto
      COMMAND ${PROTOC_C} --proto_path=${CMAKE_CURRENT_BINARY_DIR}/proto-messages
              --c_out=${CMAKE_CURRENT_BINARY_DIR}/proto ${rel}
      DEPENDS ${src} ${CARVE_PROTO_MESSAGES_SCRIPT}
      COMMENT "protoc-c (messages only): ${rel}"
      VERBATIM)
    list(APPEND out_list ${gen}.c)
  endforeach()
  set(${var} ${out_list} PARENT_SCOPE)
endfunction()
