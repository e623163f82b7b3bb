"""
=====================================================================
Continual learning on split digits: forgetting, replay, progression
=====================================================================

The 10 digits of :func:`sklearn.datasets.load_digits` are cut into 5 tasks of 2 classes
(0/1, 2/3, ..., 8/9), learnt one after the other with ``partial_fit(X, y, task=k)``;
the data of a task is gone once the next one starts.

* Class-incremental (no task id at test time): fine-tuning one classifier forgets every
  earlier task; :class:`~sklearn_papers.continual.GenerativeReplayClassifier` keeps a small
  VAE per class and replays generated digits of the earlier classes while it learns a new
  task (generative replay, Farquhar & Gal 2018 / Shin et al. 2017).
* Task-incremental (task id given): :class:`~sklearn_papers.continual.ProgressiveNetworkClassifier`
  adds a column per task and freezes the earlier ones (Rusu et al. 2016), so task 1's
  predictions never change.

The left plot follows the accuracy on task 1 (digits 0 and 1) as tasks are added; the
right one shows digits the VAEs generate for replay.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from sklearn_papers.continual import GenerativeReplayClassifier, ProgressiveNetworkClassifier

torch.set_num_threads(1)  # tiny networks: a second thread costs more than it gains

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)
task_train, task_test = y_train // 2, y_test // 2
first = task_test == 0

models = {
    "fine-tuning (class-incr.)": GenerativeReplayClassifier(
        (64, 64), generator=None, max_epochs=10, random_state=0),
    "generative replay, VAE (class-incr.)": GenerativeReplayClassifier(
        (64, 64), generator="vae", generator_steps=150, max_epochs=10, random_state=0),
    "progressive networks (task-incr.)": ProgressiveNetworkClassifier(
        (64, 64), max_epochs=10, random_state=0),
}

# %%
# Learn the 5 tasks in sequence, scoring task 1 after each
curves = {name: [] for name in models}
for k in range(5):
    rows = task_train == k
    for name, model in models.items():
        model.partial_fit(X_train[rows], y_train[rows], task=k)
        kw = {"task": 0} if isinstance(model, ProgressiveNetworkClassifier) else {}
        curves[name].append(100 * model.score(X_test[first], y_test[first], **kw))

for name, model in models.items():
    if isinstance(model, ProgressiveNetworkClassifier):
        acc = np.mean([model.score(X_test[task_test == k], y_test[task_test == k], task=k)
                       for k in range(5)])
        print(f"{name}: mean accuracy over the 5 tasks, task id given: {100 * acc:.1f} %")
        print(f"  parameters after each task: {model.n_parameters_}")
    else:
        acc = 100 * model.score(X_test, y_test)
        print(f"{name}: accuracy over all 10 classes: {acc:.1f} %")

# %%
# Plot
replay = models["generative replay, VAE (class-incr.)"]
samples, labels = replay.sample(10, y=np.arange(10))
fig = plt.figure(figsize=(11, 4))
ax = fig.add_subplot(1, 2, 1)
for name, curve in curves.items():
    ax.plot(range(1, 6), curve, marker="o", label=name)
ax.set_xticks(range(1, 6))
ax.set_xlabel("tasks learnt")
ax.set_ylabel("accuracy on task 1 (digits 0, 1), %")
ax.legend(fontsize=8)
for i in range(10):
    sub = fig.add_subplot(2, 10, 6 + i if i < 5 else 11 + i)  # the right half, 2 x 5
    sub.imshow(samples[i].reshape(8, 8), cmap="gray_r")
    sub.set_title(str(labels[i]), fontsize=8)
    sub.axis("off")
fig.suptitle("split digits: task-1 accuracy (left) and replayed samples, one per digit")
fig.tight_layout()
plt.show()
