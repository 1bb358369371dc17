// Two schemas that must both hold (allOf's parts, or anyOf's branches with the keywords
// beside anyOf) merged into one: $ref resolved, annotations of the first kept, "required"
// joined, "type" intersected, bounds tightened, properties in both merged as allOf of the
// two. Keywords set differently on both sides otherwise are a SchemaError, and so is an
// additionalProperties on one side with properties of the other it would forbid.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "baton/grammar/schema_compiler.h"

namespace baton::grammar {

SchemaJson merge_schemas(const SchemaJson& a, const SchemaJson& b, const std::string& path,
                         const SchemaJson& root);

// The schema a "#..." reference names in `root`; SchemaError at `path` when it names none.
const SchemaJson& resolve_reference(const SchemaJson& root, const std::string& ref,
                                    const std::string& path);

}  // namespace baton::grammar
