// Bytes taken from packets, made safe to put in a report: printable ASCII kept, every other byte escaped.
#pragma once

#include <string>
#include <string_view>

namespace tandem {

// Printable ASCII stays as it is; a backslash becomes "\\" and any other byte "\xHH", so the text is valid UTF-8
// and JSON whatever an attacker sent, and two different byte strings never read the same.
std::string printable_bytes(std::string_view bytes);

}  // namespace tandem
