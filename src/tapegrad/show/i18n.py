"""The words of ``tapegrad.show`` in English and Chinese.

Every text the health report, the monitor, ``tapegrad doctor`` and the trace table print is a key
here with its English and Chinese wording, filled in with ``str.format``::

    t("health.title", "zh")                  -> "梯度体检报告"
    t("finding.vanishing", "en", ratio=...)  -> "vanishing gradients: ..."

The language is chosen by ``resolve_lang``: the ``lang=`` argument, else the ``TAPEGRAD_LANG``
environment variable, else the locale (``zh*`` means Chinese), else English. The Chinese is
written for learners of the Chinese tutorials this library serves, in their words: 梯度范数,
梯度消失, 梯度爆炸, 叶子张量.
"""

from __future__ import annotations

import locale
import os

LANGS = ("en", "zh")

TEXTS: dict[str, tuple[str, str]] = {
    # --- the health table ------------------------------------------------------------------
    "health.title": ("Gradient health report", "梯度体检报告"),
    "health.title_step": ("Gradient health report (step {step})", "梯度体检报告（第 {step} 步）"),
    "col.parameter": ("parameter", "参数"),
    "col.shape": ("shape", "形状"),
    "col.grad_norm": ("grad norm", "梯度范数"),
    "col.weight_norm": ("weight norm", "权重范数"),
    "col.update_ratio": ("update/weight", "更新/权重比"),
    "col.max_abs": ("max |grad|", "最大|梯度|"),
    "col.zeros": ("zeros", "零值占比"),
    "col.nan": ("NaN", "NaN"),
    "col.inf": ("Inf", "Inf"),
    "cell.no_grad": ("no grad", "无梯度"),
    "cell.frozen": ("frozen", "已冻结"),
    "cell.update_lost": ("0 (lost)", "0（丢失）"),
    "health.lost_note": (
        "{lost}: the last step left these weights exactly as they were though their gradient "
        "was not zero: the change was smaller than the weights' dtype can add to them (float32 "
        "keeps about 7 significant digits), or the step skipped them.",
        "{lost}：最近一步之后这些权重一点没变，尽管梯度不为零：算出的变化量小于权重的数据类型所能"
        "加上的最小量（float32 大约只有 7 位有效数字），或者这一步跳过了它们。",
    ),
    "health.diagnosis": ("Diagnosis:", "诊断："),
    "health.ratio_note": (
        "update/weight: the last step's change of a weight over the weight's norm{how}",
        "更新/权重比：最近一步参数的变化量与参数范数之比{how}",
    ),
    "health.ratio_step": ("", ""),
    "health.ratio_lr": (" (estimated as lr x grad norm / weight norm)",
                        "（按 学习率 × 梯度范数 / 权重范数 估算）"),
    # --- findings ---------------------------------------------------------------------------
    "finding.vanishing": (
        "vanishing gradients: the first layer's gradient norm ({first_name}: {first}) is "
        "{ratio_text} times smaller than {which} ({last_name}: {last}), {orders} orders "
        "of magnitude. The gradient fades layer by layer on its way back to the input, so the "
        "first layers barely learn. Saturating activations (sigmoid's derivative is at most "
        "0.25) are the usual cause: try ReLU with He (kaiming) initialization, normalization "
        "layers, or residual connections.",
        "梯度消失：第一层的梯度范数（{first_name}：{first}）比{which}（{last_name}：{last}）"
        "小 {ratio_text} 倍，相差 {orders} 个数量级。梯度在逐层回传时不断衰减，靠近输入的层几乎学"
        "不到东西。常见元凶是会饱和的激活函数（sigmoid 的导数最大只有 0.25）：可以换成 ReLU 并配合 "
        "He（kaiming）初始化，加归一化层，或使用残差连接。",
    ),
    "finding.shrinking": (
        "the gradient shrinks towards the input: the first layer's gradient norm ({first_name}: "
        "{first}) is {ratio_text} times smaller than {which} ({last_name}: {last}). "
        "Not vanishing yet (less than two orders of magnitude), but worth watching.",
        "梯度在向输入回传时变小：第一层的梯度范数（{first_name}：{first}）比{which}"
        "（{last_name}：{last}）小 {ratio_text} 倍。还算不上梯度消失（不到两个数量级），"
        "但值得留意。",
    ),
    "finding.depth_ok": (
        "no vanishing gradient: the first layer's gradient norm ({first_name}: {first}) and "
        "{which} ({last_name}: {last}) differ by a factor of {ratio_text}, well within one "
        "order of magnitude.",
        "没有梯度消失：第一层的梯度范数（{first_name}：{first}）与{which}（{last_name}：{last}）"
        "只差 {ratio_text} 倍，在一个数量级之内，属于正常范围。",
    ),
    "finding.exploding_depth": (
        "exploding gradients: the first layer's gradient norm ({first_name}: {first}) is "
        "{ratio_text} times larger than {which} ({last_name}: {last}), {orders} orders "
        "of magnitude: the gradient grows on its way back to the input. Lower the weights' "
        "scale (a standard initialization), the learning rate, or clip the gradient norm "
        "(torch.nn.utils.clip_grad_norm_).",
        "梯度爆炸：第一层的梯度范数（{first_name}：{first}）比{which}（{last_name}：{last}）"
        "大 {ratio_text} 倍，相差 {orders} 个数量级：梯度在回传途中越变越大。可以缩小权重的初始"
        "尺度（用标准初始化）、降低学习率，或裁剪梯度范数（torch.nn.utils.clip_grad_norm_）。",
    ),
    "finding.exploding_norm": (
        "exploding gradients: {name} has a gradient norm of {norm} (above {limit}). Lower the "
        "learning rate or clip the gradient norm (torch.nn.utils.clip_grad_norm_).",
        "梯度爆炸：{name} 的梯度范数达到 {norm}（超过 {limit}）。可以降低学习率，或裁剪梯度范数"
        "（torch.nn.utils.clip_grad_norm_）。",
    ),
    "finding.large_update": (
        "large updates: one step changed {name} by {ratio} of its norm (more than {limit}); "
        "such steps overwrite what the weights learned. Lower the learning rate.",
        "更新步幅过大：一步就让 {name} 改变了自身范数的 {ratio}（超过 {limit}），会冲掉已学到的"
        "东西。请降低学习率。",
    ),
    "finding.nan": (
        "{what} in the gradients: the first parameter with one is {name} ({count} values).",
        "梯度中出现 {what}：第一个受影响的参数是 {name}（{count} 个值）。",
    ),
    "finding.nan_weights": (
        "{what} in the weights of {name} ({count} values): the parameters themselves are broken "
        "now; an earlier step's update carried it in.",
        "参数 {name} 的权重里出现了 {what}（{count} 个值）：参数本身已经坏了，是之前某一步的更新"
        "把它带进来的。",
    ),
    "finding.nan_backward_op": (
        " It first appeared in the backward pass, in {op}{where}. Run with "
        "torch.autograd.detect_anomaly() to get the full traceback.",
        " 它最早出现在反向传播中的 {op}{where}。用 torch.autograd.detect_anomaly() 运行可得到完整的"
        "回溯信息。",
    ),
    "finding.nan_forward_op": (
        " It first appeared in the forward pass, in the output of {op}.",
        " 它最早出现在前向传播中 {op} 的输出里。",
    ),
    "finding.nan_input": (
        " It was already in a tensor the graph started from (an input or a parameter).",
        " 它在计算图的起点（输入数据或参数）里就已经存在了。",
    ),
    "finding.nan_where": (", made at {where}", "（创建于 {where}）"),
    "finding.no_grad": (
        "{name} got no gradient: {why}",
        "{name} 没有收到梯度：{why}",
    ),
    "why.cleared": (
        "it is on the loss's path, but its gradient was cleared after backward "
        "(zero_grad() sets it to None). Check the gradients right after loss.backward().",
        "它在 loss 的计算路径上，但梯度在 backward 之后被清掉了（zero_grad() 会把它设为 None）。"
        "请在 loss.backward() 之后立刻做体检。",
    ),
    "why.not_called": (
        "its module '{module}' was not called in the forward pass, so it is not on the loss's "
        "path.",
        "它所在的模块 '{module}' 在前向传播中没有被调用，所以不在 loss 的计算路径上。",
    ),
    "why.no_grad": (
        "its module '{module}' ran under torch.no_grad() (or with grad mode off), so no graph "
        "was recorded for it.",
        "它所在的模块 '{module}' 是在 torch.no_grad()（或关闭梯度模式）下运行的，没有记账、没有"
        "建图。",
    ),
    "why.detached": (
        "the output of its module '{module}' was detached (.detach()) before it reached the "
        "loss, which cut it from the graph.",
        "它所在模块 '{module}' 的输出在到达 loss 之前被 .detach() 摘下了，链条在这里被剪断。",
    ),
    "why.unused_output": (
        "the output of its module '{module}' never reached the loss: it is not on the loss's "
        "path.",
        "它所在模块 '{module}' 的输出没有流到 loss：不在 loss 的计算路径上。",
    ),
    "why.not_in_graph": (
        "it does not appear in the loss's graph: it is not on the loss's path (not used, "
        "detached, or used under no_grad).",
        "它没有出现在 loss 的计算图里：不在 loss 的计算路径上（没被用到、被 detach，或在 no_grad 下"
        "使用）。",
    ),
    "why.unknown": (
        "it is not on the loss's path, or its use was detached or ran under no_grad. Pass "
        "loss= to health() or train with a Monitor attached to find out which.",
        "它不在 loss 的计算路径上，或者用到它的地方被 detach 了、或在 no_grad 下运行。给 health() "
        "传入 loss=，或挂上 Monitor 训练，即可查明是哪一种。",
    ),
    "finding.frozen": (
        "{count} parameter(s) have requires_grad=False (frozen) and were left out: {names}.",
        "{count} 个参数设置了 requires_grad=False（已冻结），未参与检查：{names}。",
    ),
    "finding.zero_grad_values": (
        "{name}'s gradient is exactly zero everywhere: nothing flows back to it (dead units "
        "in front of it, or a multiplication by zero).",
        "{name} 的梯度处处恰好为零：没有任何梯度流回它（前面的神经元全部死亡，或乘上了零）。",
    ),
    "finding.dead_relu": (
        "dead ReLU units: {dead} of {total} units of '{module}' output zero for the whole batch "
        "({share}); they pass no gradient back and stop learning. Lower the learning rate, use "
        "LeakyReLU, or check the initialization.",
        "ReLU 神经元死亡：'{module}' 的 {total} 个单元中有 {dead} 个在整个批次上输出都是零"
        "（{share}）；它们不再回传梯度，也就不再学习。可以降低学习率、改用 LeakyReLU，"
        "或检查初始化。",
    ),
    "finding.accumulating": (
        "gradients kept accumulating: at {steps} of the last steps the new gradient was added "
        "onto the previous step's, because zero_grad() was not called between steps. The "
        "gradient norm of {name} grew from {first} to {last}. Call optimizer.zero_grad() in "
        "every step.",
        "梯度在不断累加：最近有 {steps} 步的新梯度叠加在了上一步的旧梯度上，因为两步之间没有调用 "
        "zero_grad()。{name} 的梯度范数从 {first} 涨到了 {last}。请在每一步都调用 "
        "optimizer.zero_grad()。",
    ),
    "finding.no_grads_at_all": (
        "no parameter has a gradient yet: call loss.backward() before the health check.",
        "还没有任何参数有梯度：请先调用 loss.backward() 再做体检。",
    ),
    "finding.healthy": (
        "no problem found: gradients are finite and of similar size from the first layer to the "
        "last.",
        "没有发现问题：梯度都是有限值，从第一层到最后一层大小相近。",
    ),
    "finding.stalled": (
        "training has stalled: every gradient norm is below {limit} (the largest is {largest}). "
        "The loss is flat where the weights are: it has converged, or it is stuck (a network "
        "whose first layers get no gradient often settles on predicting the average).",
        "训练停滞：所有参数的梯度范数都低于 {limit}（最大的是 {largest}）。loss 在当前位置几乎是平"
        "的：要么已经收敛，要么卡住了（前几层收不到梯度的网络常常停在“只会预测平均值”的状态）。",
    ),
    "words.last_layer": ("the last layer's", "最后一层"),
    "words.largest_layer": ("the largest gradient among the later layers",
                            "后面各层中梯度最大的一层"),
    "severity.error": ("error", "错误"),
    "severity.warning": ("warning", "警告"),
    "severity.info": ("info", "提示"),
    "severity.ok": ("ok", "正常"),
    # --- numbers in words -------------------------------------------------------------------
    "words.nan": ("NaN", "NaN"),
    "words.inf": ("Inf", "Inf"),
    "words.nan_inf": ("NaN and Inf", "NaN 和 Inf"),
    # --- the monitor and its plot -----------------------------------------------------------
    "monitor.plot_title": ("Gradient norm per layer over training", "各层梯度范数随训练的变化"),
    "monitor.step": ("step", "步数"),
    "monitor.grad_norm": ("gradient norm (log scale)", "梯度范数（对数坐标）"),
    "monitor.no_steps": ("the monitor has recorded no step yet", "监视器还没有记录到任何一步"),
    "monitor.html_title": ("Gradient health monitor: {steps} steps recorded ({state})",
                           "梯度健康监视器：已记录 {steps} 步（{state}）"),
    "monitor.attached": ("attached", "监视中"),
    "monitor.detached": ("detached", "已卸下"),
    "report.plot_title": ("Gradient norm per parameter", "各参数的梯度范数"),
    "report.weight_norm": ("weight norm", "权重范数"),
    "report.norm_axis": ("norm (log scale)", "范数（对数坐标）"),
    "report.at_step": ("(step {step})", "（第 {step} 步）"),
    # --- tapegrad doctor ----------------------------------------------------------------------
    "doctor.usage": (
        "usage: tapegrad doctor [--out DIR] [--lang zh|en] SCRIPT [ARGS...]",
        "用法：tapegrad doctor [--out 目录] [--lang zh|en] 脚本 [参数...]",
    ),
    "doctor.running": ("tapegrad doctor: running {script} on tapegrad",
                       "tapegrad doctor：正在用 tapegrad 运行 {script}"),
    "doctor.progress": ("  step {step}", "  第 {step} 步"),
    "doctor.progress_loss": ("  step {step}  loss {loss}", "  第 {step} 步  loss {loss}"),
    "doctor.no_optimizer": (
        "the script created no optimizer: there are no training steps to examine.",
        "脚本没有创建优化器：没有可供检查的训练步。",
    ),
    "doctor.optimizer": ("optimizer {index}: {name}", "优化器 {index}：{name}"),
    "doctor.exit": ("the script exited with status {code}", "脚本以状态码 {code} 退出"),
    "doctor.error": ("the script stopped with an error: {error}", "脚本因错误而中止：{error}"),
    "doctor.wrote": ("wrote {path}", "已写入 {path}"),
    "doctor.no_plot": (
        "no plot: matplotlib is not installed (pip install 'tapegrad[viz]')",
        "未画图：没有安装 matplotlib（pip install 'tapegrad[viz]'）",
    ),
    # --- the trace table (show.trace) ------------------------------------------------------
    "trace.col.step": ("step", "步骤"),
    "trace.col.node": ("node", "节点"),
    "trace.col.received": ("received", "收到的梯度"),
    "trace.col.time": ("time", "耗时"),
    "trace.col.sent": ("sent along each edge / accumulated", "沿各条边发出 / 累加"),
    "trace.no_edge": ("(no gradient: constant or requires_grad=False)",
                      "（无梯度：常量或 requires_grad=False）"),
    "trace.returned": ("{leaf}: {grad} (returned by autograd.grad)",
                       "{leaf}：{grad}（由 autograd.grad 返回）"),
    "trace.hook": ("hook: {hook}", "钩子：{hook}"),
    "trace.note.no_gradient": ("no gradient reached it", "没有梯度传到这里"),
    "trace.note.captured": ("captured for autograd.grad", "被 autograd.grad 截取"),
    "trace.note.not_asked": ("not asked for (inputs=)", "不在所求之列（inputs=）"),
    "trace.note.skipped": ("skipped: nothing asked for lies behind it",
                           "跳过：它后面没有要求梯度的张量"),
    "trace.html_title": ("Backward trace: {steps} steps in {passes} pass(es)",
                         "反向传播记录：{passes} 次反向传播，共 {steps} 步"),
    "trace.html_hint": ("t.graph() draws the graph with each edge's gradient; "
                        "show.report.write_report(path, trace=t) writes a page to step through.",
                        "t.graph() 画出计算图，每条边标着流过的梯度；"
                        "show.report.write_report(path, trace=t) 写出可逐步查看的网页。"),
    "trace.hook_replaced": ("(a hook replaced the gradient)", "（钩子替换了梯度）"),
    "trace.tensor_hook": ("tensor hook", "张量钩子"),
    "trace.pre_hook": ("pre-hook", "前置钩子"),
    "trace.post_hook": ("post-hook", "后置钩子"),
    "trace.post_accumulate_hook": ("post-accumulate hook", "累加后钩子"),
    # --- the graph's text tree (show.graph) ---------------------------------------------------
    "graph.saved": ("saved:", "保存："),
    "graph.input": ("input {pos}", "输入 {pos}"),
    "graph.result": ("result", "结果"),
    "graph.in_place": ("(now v{now}: changed in place, backward will fail)",
                       "（现为 v{now}：已被原地修改，反向传播会失败）"),
    "graph.freed": ("(freed by backward; retain_graph=True keeps it)",
                    "（已被 backward 释放；retain_graph=True 可保留）"),
    "graph.packed": ("(packed by saved_tensors_hooks)", "（由 saved_tensors_hooks 打包）"),
    "graph.leaf": ("(leaf)", "（叶子节点）"),
    "graph.no_edge": ("(no gradient: constant or requires_grad=False)",
                      "（无梯度：常量或 requires_grad=False）"),
    "graph.shown_above": ("(shown above)", "（见上文）"),
    "graph.depth_reached": ("… (max_depth reached)", "…（已达 max_depth）"),
    "graph.block_start": ("┌ ×{count} repeated block: {count} copies of {size} nodes, the first "
                          "shown",
                          "┌ ×{count} 重复块：{size} 个节点重复 {count} 次，只显示第一份"),
    "graph.block_end": ("└ (end of the repeated block)", "└（重复块结束）"),
    "graph.cut": ("(max_depth={depth}: the graph goes on below the nodes marked …)",
                  "（max_depth={depth}：计算图在标 … 的节点下面还有后续）"),
    # --- tapegrad graph -------------------------------------------------------------------------
    "graphcmd.usage": (
        "usage: tapegrad graph [--out FILE] [--max-depth N] [--no-collapse] [--lang zh|en] "
        "SCRIPT [ARGS...]\n       tapegrad graph SCRIPT [ARGS...] [--out FILE]",
        "用法：tapegrad graph [--out 文件] [--max-depth N] [--no-collapse] [--lang zh|en] "
        "脚本 [参数...]\n      tapegrad graph 脚本 [参数...] [--out 文件]",
    ),
    "cli.cant_open": (
        "tapegrad {command}: can't open file {script!r}: [Errno 2] No such file or directory",
        "tapegrad {command}：无法打开文件 {script!r}：[Errno 2] 没有那个文件或目录",
    ),
    "graphcmd.no_backward": (
        "tapegrad graph: {script} finished without calling backward: no graph to draw",
        "tapegrad graph：{script} 运行结束也没有调用 backward：没有计算图可画",
    ),
    "graphcmd.dot_kept": ("The DOT source is in {path}.", "DOT 源文件在 {path}。"),
    "graphcmd.wrote": ("wrote {path}", "已写入 {path}"),
    # --- the report page (show.report) --------------------------------------------------------
    "page.title": ("tapegrad: autograd, shown", "tapegrad：看见自动求导"),
    "page.graph": ("The graph", "计算图"),
    "page.graph_note": (
        "Arrows point the way gradients flow, from the output to the leaves; blue boxes are "
        "leaves, where a gradient lands in .grad.",
        "箭头是梯度流动的方向，从输出指向叶子节点；蓝色框是叶子节点，梯度最终落在它的 .grad 里。",
    ),
    "page.text_tree": ("The graph as text", "计算图（文本形式）"),
    "page.trace": ("The backward pass, step by step", "反向传播，逐步查看"),
    "page.prev": ("◀ Prev", "◀ 上一步"),
    "page.next": ("Next ▶", "下一步 ▶"),
    "page.keys": ("keys: ← → (or j k); click a node or a row",
                  "按键：← →（或 j k）；也可点击图中节点或表格行"),
    "page.step": ("step", "步骤"),
    "page.position": ("step {step} ({pos} of {n})", "步骤 {step}（第 {pos} 个，共 {n} 个）"),
    "page.more_steps": ("… {count} more steps", "… 还有 {count} 步"),
    "page.node": ("node", "节点"),
    "page.received": ("received", "收到的梯度"),
    "page.sent": ("sent along each edge / accumulated", "沿各条边发出 / 累加"),
    "page.time": ("time", "耗时"),
    "page.hooks": ("hooks", "钩子"),
    "page.note": ("note", "说明"),
    "page.no_grad": ("no gradient (constant or requires_grad=False)",
                     "无梯度（常量或 requires_grad=False）"),
    "page.figures": ("Figures", "图表"),
    "page.no_trace": ("No backward pass was recorded for this page.", "本页没有记录反向传播。"),
    "page.copy": ("copy {copy} of {of} of a repeated block: highlighted on the copy shown",
                  "重复块的第 {copy} 份（共 {of} 份）：高亮显示在画出的那一份上"),
    "doctor.trace_title": ("The backward pass of step 1", "第 1 步的反向传播"),
    "doctor.page_title": ("tapegrad doctor: {script}", "tapegrad doctor：{script}"),
    # --- the precision lab (show/precision.py) -------------------------------------------
    "precision.title": (
        "Precision lab: one model, four precisions, {steps} SGD steps each",
        "精度实验室：同一个模型，四种精度，各训练 {steps} 步 SGD"),
    "precision.run.float32": ("float32", "float32"),
    "precision.run.float16": ("float16 (no scaling)", "float16（不缩放）"),
    "precision.run.float16+scaler": ("float16 autocast + GradScaler",
                                     "float16 autocast + GradScaler"),
    "precision.run.bfloat16": ("bfloat16 autocast", "bfloat16 autocast"),
    "precision.col.run": ("run", "训练方式"),
    "precision.col.first": ("first loss", "初始损失"),
    "precision.col.last": ("last loss", "最终损失"),
    "precision.col.nonfinite": ("first inf/NaN loss", "首个 inf/NaN 损失"),
    "precision.col.skipped": ("skipped steps", "跳过的步数"),
    "precision.col.ms": ("ms/step", "毫秒/步"),
    "precision.overflow": (
        "float16 overflow: at step {step} the gradient of {parameter} went past 65504 "
        "({count} of {size} entries inf or NaN).",
        "float16 上溢：第 {step} 步 {parameter} 的梯度超过了 65504（{size} 个元素中有 {count} "
        "个是 inf 或 NaN）。"),
    "precision.underflow": (
        "float16 underflow: at step {step} the gradient of {parameter} had {count} more exact "
        "zeros (of {size} entries) than in float32: values too small for float16 became 0.",
        "float16 下溢：第 {step} 步 {parameter} 的梯度比 float32 多出 {count} 个精确的 0"
        "（共 {size} 个元素）：小到 float16 无法表示的值变成了 0。"),
    "precision.half_ok": ("float16 kept every gradient finite and non-zero.",
                          "float16 的所有梯度都保持有限且非零。"),
    "precision.health": ("The health check at that step: {text}", "该步的梯度体检：{text}"),
    "precision.nan_loss": (
        "float16 without scaling: the update wrote the overflow into the weights; the loss is "
        "inf or NaN from step {step} on.",
        "不缩放的 float16：参数更新把溢出写进了权重，从第 {step} 步起损失一直是 inf 或 NaN。"),
    "precision.scaler": (
        "GradScaler: skipped {skipped} step(s) with inf/NaN gradients, halving its scale each "
        "time; its first update was at step {first}, and its scale is now {scale}.",
        "GradScaler：跳过了 {skipped} 个梯度含 inf/NaN 的步，每次把缩放因子减半；第一次真正更新"
        "参数是在第 {first} 步，现在的缩放因子是 {scale}。"),
    "precision.bf16": (
        "bfloat16 autocast needs no scaling (float32's range): last loss {last} "
        "(float32: {f32}).",
        "bfloat16 autocast 不需要缩放（数值范围与 float32 相同）：最终损失 {last}"
        "（float32：{f32}）。"),
    "precision.plot.title": ("Loss per step", "每步的损失"),
    "precision.plot.scale": ("GradScaler's scale (grey: skipped steps)",
                             "GradScaler 的缩放因子（灰线：跳过的步）"),
    "precision.plot.step": ("step", "步"),
    "precision.plot.loss": ("loss (summed over the batch)", "损失（对批次求和）"),
    "precision.plot.nan": ("inf/NaN from step {step}", "第 {step} 步起 inf/NaN"),
    "precision.wrote": ("picture written to {path}", "图片已写入 {path}"),
}


def resolve_lang(lang: str | None = None) -> str:
    """'en' or 'zh': the argument, else ``TAPEGRAD_LANG``, else the locale, else English."""
    for choice in (lang, os.environ.get("TAPEGRAD_LANG")):
        if choice:
            code = choice.lower()
            if code.startswith("zh"):
                return "zh"
            if code.startswith("en"):
                return "en"
            raise ValueError(f"unknown language {choice!r}: expected one of {LANGS}")
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        current = locale.getlocale()[0] or ""
    except ValueError:
        current = ""
    return "zh" if current.lower().startswith("zh") else "en"


def t(key: str, lang: str | None = None, **fields: object) -> str:
    """The text ``key`` in ``lang`` (resolved by ``resolve_lang``), filled with ``fields``."""
    en, zh = TEXTS[key]
    text = zh if resolve_lang(lang) == "zh" else en
    return text.format(**fields) if fields else text
