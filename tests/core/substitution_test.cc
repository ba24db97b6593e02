#include "core/workflows/substitution.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

SubstitutionContext context() {
  SubstitutionContext ctx;
  ctx.workflow_name = "wf";
  ctx.inputs = {{"who", "Ada"}, {"n", 3}};
  ctx.step_parameters["greet"] = {{"greeting", "Hello"}};
  return ctx;
}

TEST(SubstitutionTest, ReplacesEveryKindOfReference) {
  auto out = substitute(Json::parse(R"({"a":"${inputs.who} in ${workflow.name}",
      "b":["${steps.greet.outputs.parameters.greeting}!"], "c":"n=${inputs.n}", "d":7})"),
                        context());
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ((*out)["a"], "Ada in wf");
  EXPECT_EQ((*out)["b"][0], "Hello!");
  EXPECT_EQ((*out)["c"], "n=3");
  EXPECT_EQ((*out)["d"], 7);
}

TEST(SubstitutionTest, AWholeInputReferenceKeepsItsType) {
  auto out = substitute(Json("${inputs.n}"), context());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, Json(3));
}

TEST(SubstitutionTest, DoubleDollarIsALiteral) {
  auto out = substitute(Json("cost: $5, literal $${inputs.who}"), context());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, Json("cost: $5, literal ${inputs.who}"));
}

TEST(SubstitutionTest, ReportsWhatCannotBeResolved) {
  EXPECT_EQ(substitute(Json("${steps.greet.outputs.parameters.nope}"), context()).error().message(),
            "${steps.greet.outputs.parameters.nope}: step 'greet' did not output parameter 'nope'");
  EXPECT_EQ(substitute(Json("${inputs.missing}"), context()).error().message(),
            "${inputs.missing}: no input 'missing'");
}

TEST(SubstitutionTest, RejectsMalformedReferences) {
  for (const char* bad : {"${inputs.who", "${nothing}", "${steps.x.outputs.y}", "${inputs.}"}) {
    EXPECT_FALSE(findReferences(Json(bad)).ok()) << bad;
  }
}

}  // namespace
}  // namespace plugboard::core
