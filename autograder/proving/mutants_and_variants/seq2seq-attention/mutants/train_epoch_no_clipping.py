"""train_epoch does not clip the gradients."""



def train_epoch(model, optimizer, batches, pad_id=0, clip=1.0):
    model.train()
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = sequence_loss(logits, batch.tgt_out, pad_id)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)
