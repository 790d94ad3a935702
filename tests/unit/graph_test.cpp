// The IR's structural checks: topological order, cycles, dangling inputs.
#include <gtest/gtest.h>

#include "ir/graph.h"

namespace ninegrid {
namespace {

Node make_node(Graph& g, const std::string& name, const std::string& op, std::vector<std::string> ins,
               std::vector<std::string> outs) {
  Node n;
  n.name = name;
  n.op_type = op;
  for (auto& i : ins) {
    int id = g.find_value(i);
    n.inputs.push_back(id >= 0 ? id : g.add_value(i));
  }
  for (auto& o : outs) {
    int id = g.find_value(o);
    n.outputs.push_back(id >= 0 ? id : g.add_value(o));
  }
  return n;
}

TEST(Graph, TopoSortOrdersProducersFirst) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  Node b = make_node(g, "b", "Relu", {"y"}, {"z"});
  Node a = make_node(g, "a", "Relu", {"x"}, {"y"});
  g.nodes = {b, a};
  g.outputs.push_back(g.find_value("z"));
  g.topo_sort();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "a");
  EXPECT_EQ(g.nodes[1].name, "b");
}

TEST(Graph, CycleIsAnErrorNamingANode) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  Node a = make_node(g, "a", "Add", {"x", "q"}, {"p"});
  Node b = make_node(g, "b", "Relu", {"p"}, {"q"});
  g.nodes = {a, b};
  g.outputs.push_back(g.find_value("q"));
  try {
    g.topo_sort();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node '"), std::string::npos) << e.what();
  }
}

TEST(Graph, MissingInputIsAnErrorNamingTheValue) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  Node a = make_node(g, "a", "Add", {"x", "ghost"}, {"y"});
  g.nodes = {a};
  g.outputs.push_back(g.find_value("y"));
  try {
    g.topo_sort();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ghost"), std::string::npos) << e.what();
  }
}

TEST(Graph, ValueProducedTwiceIsAnError) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  Node a = make_node(g, "a", "Relu", {"x"}, {"y"});
  Node b = make_node(g, "b", "Relu", {"x"}, {"y"});
  g.nodes = {a, b};
  g.outputs.push_back(g.find_value("y"));
  EXPECT_THROW(g.topo_sort(), Error);
}

TEST(Shape, NumelRejectsOverflow) {
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_THROW(shape_numel({int64_t(1) << 40, int64_t(1) << 40}), Error);
  EXPECT_THROW(shape_numel({-1, 3}), Error);
}

TEST(Shape, ParseShape) {
  EXPECT_EQ(parse_shape("1x3x224x224"), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(parse_shape("2,5"), (Shape{2, 5}));
  EXPECT_THROW(parse_shape("1xx3"), Error);
  EXPECT_THROW(parse_shape("abc"), Error);
}

}  // namespace
}  // namespace ninegrid
