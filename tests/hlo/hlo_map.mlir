#loc1 = loc("a")
#loc2 = loc("b")
#loc5 = loc("a.1")
#loc6 = loc("b.1")
#loc9 = loc("x")
#loc13 = loc("x.1")
#loc14 = loc("y")
#loc15 = loc("i")
#loc16 = loc("m0")
#loc17 = loc("m1")
#loc18 = loc("m2")
module @hlo_map attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func private @mul_add(%arg0: tensor<f32> loc("a"), %arg1: tensor<f32> loc("b")) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32> loc(#loc3)
    %1 = stablehlo.multiply %0, %arg0 : tensor<f32> loc(#loc4)
    return %1 : tensor<f32> loc(#loc)
  } loc(#loc)
  func.func private @max_sin(%arg0: tensor<f32> loc("a.1"), %arg1: tensor<f32> loc("b.1")) -> tensor<f32> {
    %0 = stablehlo.sine %arg0 : tensor<f32> loc(#loc7)
    %1 = stablehlo.maximum %0, %arg1 : tensor<f32> loc(#loc8)
    return %1 : tensor<f32> loc(#loc)
  } loc(#loc)
  func.func private @square_minus_one(%arg0: tensor<i32> loc("x")) -> tensor<i32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<i32> loc(#loc10)
    %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc11)
    %1 = stablehlo.subtract %0, %c : tensor<i32> loc(#loc12)
    return %1 : tensor<i32> loc(#loc)
  } loc(#loc)
  func.func @main(%arg0: tensor<3x4xf32> loc("x.1"), %arg1: tensor<3x4xf32> loc("y"), %arg2: tensor<5xi32> loc("i")) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<5xi32>) {
    %0 = "stablehlo.map"(%arg0, %arg1) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg3: tensor<f32> loc("m0"), %arg4: tensor<f32> loc("m0")):
      %3 = stablehlo.add %arg3, %arg4 : tensor<f32> loc(#loc3)
      %4 = stablehlo.multiply %3, %arg3 : tensor<f32> loc(#loc4)
      stablehlo.return %4 : tensor<f32> loc(#loc)
    }) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc(#loc16)
    %1 = "stablehlo.map"(%0, %arg0) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg3: tensor<f32> loc("m1"), %arg4: tensor<f32> loc("m1")):
      %3 = stablehlo.sine %arg3 : tensor<f32> loc(#loc7)
      %4 = stablehlo.maximum %3, %arg4 : tensor<f32> loc(#loc8)
      stablehlo.return %4 : tensor<f32> loc(#loc)
    }) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc(#loc17)
    %2 = "stablehlo.map"(%arg2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg3: tensor<i32> loc("m2")):
      %3 = stablehlo.multiply %arg3, %arg3 : tensor<i32> loc(#loc10)
      %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc11)
      %4 = stablehlo.subtract %3, %c : tensor<i32> loc(#loc12)
      stablehlo.return %4 : tensor<i32> loc(#loc)
    }) : (tensor<5xi32>) -> tensor<5xi32> loc(#loc18)
    return %0, %1, %2 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<5xi32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("s")
#loc4 = loc("m")
#loc7 = loc("sa")
#loc8 = loc("mx")
#loc10 = loc("sq")
#loc11 = loc("one")
#loc12 = loc("r")
